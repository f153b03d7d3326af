"""A weakened greedy sample bot: greedy, but one decision in ten is the random bot's (bench/ab_test.py)."""

from sample_bots.policy_bot import PolicyBot

if __name__ == "__main__":
    PolicyBot("greedy-eps10").run()
