"""The house bot at level medium (arena/house.py): determinized search within its CPU budget."""

from sample_bots.house import HouseBot

if __name__ == "__main__":
    HouseBot("house-medium").run()
