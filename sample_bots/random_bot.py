"""The random sample bot: a uniformly random choice among sensible legal moves."""

from sample_bots.policy_bot import PolicyBot

if __name__ == "__main__":
    PolicyBot("random").run()
