"""Serving a policy to a Kubernetes-style scheduler: bundle, registry, store, learner, servers.

Import-light: nothing here imports torch or the web frameworks; import the submodules
(``rlsched.serve.bundle`` ...) for the pieces you need.
"""
