"""The house bot at level easy (arena/house.py): determinized search within its CPU budget."""

from sample_bots.house import HouseBot

if __name__ == "__main__":
    HouseBot("house-easy").run()
