"""Runs main.main(), the board's real loop, in the unix port: `run_main.py READER`.

With "rc522", simulated chips sit on both chip selects and an NTAG-like tag lies on
the DEFENDER board. Stops only when killed, like the board.
"""

import sys

import machine
import main
from fake_mfrc522 import Card, FakeMfrc522

reader = sys.argv[1]
if reader == "rc522":
    for letter, bus in main.RC522_BUS.items():
        cs = bus[4]
        chip = FakeMfrc522(cs)
        machine.SPI.attach(cs, chip)
        if letter == "D":
            chip.add(Card(b"\x04\xa1\xb2\xc3\xd4\x8e\x80"))
main.READER = reader
main.main()
