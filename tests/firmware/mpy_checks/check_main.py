"""main.py's slots and main-loop step under MicroPython, on fake hardware.

Lines the firmware writes are also printed as `WIRE <line>` so that the pytest side
decodes them with the Pi's own decoder (arbiter.drivers.readers.mcu).
"""

import machine
import main
import mfrc522
from fake_mfrc522 import Card, FakeMfrc522
from mpyunit import raises, run

UID7 = b"\x04\xa1\xb2\xc3\xd4\x8e\x80"
UID4 = b"\xde\xad\xbe\xef"


class Wire:
    """Stands in for sys.stdout: keeps the lines and prints them for the Pi's decoder."""

    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)
        print("WIRE " + text.rstrip("\n"))

    def bodies(self):
        out = [line.rsplit("*", 1)[0] for line in self.lines]
        self.lines = []
        return out


def rc522_board():
    machine.SPI.devices.clear()
    machine.Pin.pins.clear()
    chips = {}
    for letter, bus in main.RC522_BUS.items():
        chips[letter] = FakeMfrc522(bus[4])
        machine.SPI.attach(bus[4], chips[letter])
    slots = main.make_slots("rc522")
    return chips, slots


def check_rc522_slots_use_the_documented_pins():
    chips, slots = rc522_board()
    assert [slot.letter for slot in slots] == ["A", "D"]
    for spi, sck, mosi, miso, cs, rst in main.RC522_BUS.values():
        bus = machine.SPI.buses[spi]
        assert [pin.id for pin in bus.pins] == [sck, mosi, miso]
        assert machine.Pin.pins[rst].value() == 1  # out of reset
    assert sorted(machine.SPI.buses) == [0, 1]  # a bus each: no shared wire
    for chip in chips.values():
        assert chip.regs[0x14] & 0x03 == 0x03  # each chip initialised
        assert chip.regs[0x26] == 0x48  # RX_GAIN_DB 33: RxGain 100, the other bits kept


def check_rc522_gain_set_from_the_pi():
    chips, slots = rc522_board()
    wire = Wire()
    fw = main.Firmware(slots, wire)
    fw.step(0, "GAIN 4")
    assert wire.bodies() == []  # not before its newline
    fw.step(5, "8\n")
    assert wire.bodies() == ["GAIN 48"]
    for chip in chips.values():  # RFCfgReg bits 6..4 = 111 (48 dB), bit 3 as it was
        assert chip.regs[0x26] == 0x78
    fw.step(10, "GAIN 18\n?\n")
    assert wire.bodies() == ["GAIN 18", "HELLO gg-slots 1", "A EMPTY", "D EMPTY"]
    assert [chip.regs[0x26] for chip in chips.values()] == [0x08, 0x08]
    fw.step(15, "GAIN 30\n")
    assert wire.bodies() == ["ERR GAIN 30: not one of 18 23 33 38 43 48"]
    assert [chip.regs[0x26] for chip in chips.values()] == [0x08, 0x08]


def check_rc522_firmware_reports_ntag_then_empty():
    chips, slots = rc522_board()
    wire = Wire()
    fw = main.Firmware(slots, wire)
    fw.start()
    assert wire.bodies() == ["HELLO gg-slots 1", "A EMPTY", "D EMPTY"]
    card = chips["D"].add(Card(UID7))
    now = 0
    assert fw.step(now) is True
    assert wire.bodies() == ["D TAG 04A1B2C3D48E80"]
    for now in range(5, 1000, 5):  # the tag stays: nothing more is sent
        fw.step(now)
    assert wire.bodies() == []
    assert len([f for f, bits in chips["D"].frames if bits == 7]) == 1000 // main.RC522_POLL_MS
    chips["D"].remove(card)
    gone = now
    while not wire.lines:
        now += 5
        assert now < gone + 2 * main.REMOVAL_MS
        fw.step(now)
    assert wire.bodies() == ["D EMPTY"]
    assert now - gone >= main.REMOVAL_MS - main.RC522_POLL_MS


def check_rc522_firmware_answers_state_requests():
    chips, slots = rc522_board()
    wire = Wire()
    fw = main.Firmware(slots, wire)
    chips["A"].add(Card(UID4))
    fw.step(0)
    wire.bodies()
    fw.step(5, "?\n")
    assert wire.bodies() == ["HELLO gg-slots 1", "A TAG DEADBEEF", "D EMPTY"]


def check_rc522_collision_is_no_reading():
    chips, slots = rc522_board()
    wire = Wire()
    fw = main.Firmware(slots, wire)
    chips["A"].add(Card(UID4))
    chips["A"].add(Card(UID7))
    for now in range(0, 500, 5):
        assert fw.step(now) is False
    assert wire.bodies() == []
    # after a collision the tags are left READY: the next WUPA sends them back to IDLE
    # unanswered, the one after collides again
    assert slots[0].errors == 500 // main.RC522_POLL_MS // 2


def check_rc522_one_bad_read_does_not_empty_the_slot():
    chips, slots = rc522_board()
    wire = Wire()
    fw = main.Firmware(slots, wire)
    card = chips["A"].add(Card(UID7))
    fw.step(0)
    card.bad_crc = 2
    for now in range(5, 400, 5):
        fw.step(now)
    assert wire.bodies() == ["A TAG 04A1B2C3D48E80"]
    assert slots[0].errors >= 2


def check_rc522_missing_board_is_reported():
    machine.SPI.devices.clear()
    machine.Pin.pins.clear()
    cs_a, cs_d = main.RC522_BUS["A"][4], main.RC522_BUS["D"][4]
    machine.SPI.attach(cs_a, FakeMfrc522(cs_a))
    # nothing on the DEFENDER chip select: MISO floats high
    absent = FakeMfrc522(cs_d, version=0xFF)
    machine.SPI.attach(cs_d, absent)
    wire = Wire()
    fw = main.Firmware(main.make_slots("rc522"), wire)
    fw.start()
    assert wire.bodies() == [
        "HELLO gg-slots 1",
        "A EMPTY",
        "D EMPTY",
        "ERR RC522 D not answering on SPI: check its wiring",
    ]
    for now in range(0, 200, 5):
        fw.step(now)
    assert absent.frames == []  # not polled


def check_rdm6300_firmware_ignores_gain():
    machine.UART.uarts.clear()
    wire = Wire()
    fw = main.Firmware(main.make_slots("rdm6300"), wire)
    fw.step(0, "GAIN 38\n")
    assert wire.bodies() == []


def check_rdm6300_firmware_reports_tag():
    machine.UART.uarts.clear()
    slots = main.make_slots("rdm6300")
    uart_a = machine.UART.uarts[main.RDM6300_UART["A"][0]]
    assert uart_a.rx.id == main.RDM6300_UART["A"][2]
    wire = Wire()
    fw = main.Firmware(slots, wire)
    uart_a.pending += b"\x0262E3086CED08\x03"
    assert fw.step(0) is True
    assert wire.bodies() == ["A TAG 62E3086CED"]


def check_unknown_reader_is_refused():
    raises(ValueError, main.make_slots, "pn532")


def check_err_line_is_printable():
    wire = Wire()
    wire.write(main.encode("ERR " + main.printable(repr(mfrc522.CheckError("bad\x07*x")))))
    assert wire.bodies()[0].startswith("ERR CheckError")


run(globals())
