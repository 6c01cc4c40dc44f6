"""Learning agents below both acting (:mod:`rlsched.policies`) and training
(:mod:`rlsched.train`): the algorithms by name and the saved-model folder
(:mod:`~rlsched.agents.models`), the node-scoring network (:mod:`~rlsched.agents.networks`),
masked DQN (:mod:`~rlsched.agents.masked_dqn`) and the zoo export
(:mod:`~rlsched.agents.export`)."""
