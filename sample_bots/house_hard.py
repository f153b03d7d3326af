"""The house bot at level hard (arena/house.py): determinized search within its CPU budget."""

from sample_bots.house import HouseBot

if __name__ == "__main__":
    HouseBot("house-hard").run()
