"""The greedy sample bot: opens and melds as soon as it can, lays off, discards high."""

from sample_bots.policy_bot import PolicyBot

if __name__ == "__main__":
    PolicyBot("greedy").run()
