"""Issue 13: the WorkflowOffloading ``congested`` zoo entry ``workflow-congested-ppo``, chosen
again by the pooled validation rule of ``make_zoo_vm.py`` (``make_zoo.pooled_choice``).

Why: a second test on 30 fresh test episodes (``confirm_test.py``, seeds 2000-2029) found the
entry, a HEFT clone fine-tuned by PPO on the makespan reward, significantly worse than HEFT
(+3.71 s of mean completion [+2.43, +5.84], 27 losses of 30), where its card's 10 test
episodes had shown no significant difference. ``configs/workflow_offloading_congested_clone.
yaml`` keeps the clone without RL:

    for s in 0 1 2; do rlsched train --config configs/workflow_offloading_congested_clone.yaml \\
        --out runs/zoo/workflow_offloading_congested_clone/seed$s --seed $s; done
    python docs/results/make_zoo_wf_congested.py [--episodes N]

The rule, fixed here before any candidate was judged: the clone recipe's seeds and the PPO
recipe's (``workflow_offloading_congested``, the entry's own) are the candidates; they, the
entry and HEFT play the same 100 validation episodes (seeds 10,000-10,099, preset
``congested``); eligible: not significantly worse than HEFT; the eligible candidate with the
lowest mean completion replaces the entry when the entry is not eligible or that candidate is
significantly better than the entry. HEFT alone stands for the heuristics: on 30 of these
validation episodes (2026-11-27, every heuristic that does not search) HEFT and greedy_eft
(the same schedule) had 1,341.7 s and the next best, all_local, 1,695.6 s; the other
heuristics would cost about 13 minutes more. A replacement is judged by a third test on 30
fresh test episodes, seeds 3000-3029 (``confirm_test.py workflow-congested-ppo --seed 3000``).
"""

from make_zoo import Choice, pooled_choice

CHOICE = Choice(
    name="workflow-congested-ppo",
    env="rlsched/WorkflowOffloading-v0",
    preset="congested",
    extra={},
    pool=("workflow_offloading_congested", "workflow_offloading_congested_clone"),
    metric="mean_completion",
    unit="s of mean completion",
    results="wf_congested_choice",
    script="docs/results/make_zoo_wf_congested.py",
    episodes=100,
    heuristics="heft",
    direction="lower",
)

if __name__ == "__main__":
    pooled_choice(CHOICE)
