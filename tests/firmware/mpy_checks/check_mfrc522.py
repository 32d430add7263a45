"""The MFRC522 driver against the simulated chip and tags (run by MicroPython)."""

import fake_mfrc522
import machine
import mfrc522
from fake_mfrc522 import Card, FakeMfrc522
from mpyunit import raises, run

UID4 = b"\x12\x34\x56\x78"
UID7 = b"\x04\xa1\xb2\xc3\xd4\x8e\x80"  # NTAG-like: manufacturer byte 0x04 (NXP)
UID10 = b"\x04\x11\x22\x33\x44\x55\x66\x77\x88\x99"


def reader(cs=17):
    """A fresh simulated chip on SPI0 and the driver for it, initialised."""
    machine.SPI.devices.clear()
    machine.Pin.pins.clear()
    chip = FakeMfrc522(cs)
    machine.SPI.attach(cs, chip)
    spi = machine.SPI(0, baudrate=1000000, polarity=0, phase=0)
    driver = mfrc522.MFRC522(spi, machine.Pin(cs))
    driver.init()
    return chip, driver


def check_crc_a_known_values():
    # HLTA is sent as 50 00 57 CD (ISO/IEC 14443-3); the CRC_A check value is 0xBF05.
    assert mfrc522.crc_a(b"\x50\x00") == b"\x57\xcd"
    assert mfrc522.crc_a(b"123456789") == b"\x05\xbf"


def check_crc_a_agrees_with_bitwise_reference():
    for frame in (b"", b"\x93\x70\x12\x34\x56\x78\x08", bytes(range(256)), b"\xff" * 9):
        assert mfrc522.crc_a(frame) == fake_mfrc522.crc_a(frame), frame


def check_init_resets_and_switches_antenna_on():
    chip, driver = reader()
    assert chip.resets == 2  # power-up and the driver's soft reset
    assert chip.regs[0x14] & 0x03 == 0x03
    assert driver.version() == 0x92


def check_no_card_is_none():
    _, driver = reader()
    assert driver.read_uid() is None


def check_reads_4_byte_uid():
    chip, driver = reader()
    chip.add(Card(UID4))
    assert driver.read_uid() == UID4


def check_reads_7_byte_uid_over_two_cascade_levels():
    chip, driver = reader()
    card = chip.add(Card(UID7))
    assert driver.read_uid() == UID7
    assert card.selects == 2
    sels = [frame[0] for frame, _ in chip.frames if len(frame) == 9]
    assert sels == [0x93, 0x95], sels


def check_reads_10_byte_uid_over_three_cascade_levels():
    chip, driver = reader()
    card = chip.add(Card(UID10))
    assert driver.read_uid() == UID10
    assert card.selects == 3


def check_halts_the_card_and_wakes_it_next_poll():
    chip, driver = reader()
    card = chip.add(Card(UID7))
    assert driver.read_uid() == UID7
    assert card.state == "HALT"
    # a REQA would not wake a halted tag: the driver must use WUPA
    assert driver.read_uid() == UID7
    assert [f for f, bits in chip.frames if bits == 7] == [b"\x52", b"\x52"]


def check_removed_card_reads_none():
    chip, driver = reader()
    card = chip.add(Card(UID4))
    assert driver.read_uid() == UID4
    chip.remove(card)
    assert driver.read_uid() is None


def check_two_cards_collide():
    chip, driver = reader()
    chip.add(Card(UID4))
    chip.add(Card(b"\x12\x34\x56\x79"))  # differs in one bit of the last byte
    error = raises(mfrc522.CollisionError, driver.read_uid)
    assert "bit 25" in str(error), error  # first bit of byte 4, counted from 1


def check_bad_bcc_is_refused_then_recovers():
    chip, driver = reader()
    card = chip.add(Card(UID7))
    card.bad_bcc = 1
    raises(mfrc522.CheckError, driver.read_uid)
    got = [driver.read_uid() for _ in range(3)]
    assert UID7 in got, got


def check_bad_sak_crc_is_refused():
    chip, driver = reader()
    card = chip.add(Card(UID7))
    card.bad_crc = 1
    raises(mfrc522.CheckError, driver.read_uid)
    assert card.selects == 1


def check_cascade_without_cascade_tag_is_refused():
    chip, driver = reader()
    card = chip.add(Card(UID7))
    card.cascade_byte = 0x04  # SAK says "more levels" but CL1 lacks the 0x88 tag
    raises(mfrc522.CheckError, driver.read_uid)


def check_antenna_off_means_no_card():
    chip, driver = reader()
    chip.add(Card(UID4))
    chip.regs[0x14] = 0
    assert driver.read_uid() is None


def check_chip_without_timer_is_chip_error():
    chip, driver = reader()
    chip.regs[0x2A] = 0  # TAuto off: no TimerIRq ever
    raises(mfrc522.ChipError, driver.read_uid)


def check_two_readers_share_the_bus():
    machine.SPI.devices.clear()
    machine.Pin.pins.clear()
    a, d = FakeMfrc522(17), FakeMfrc522(20)
    machine.SPI.attach(17, a)
    machine.SPI.attach(20, d)
    spi = machine.SPI(0, baudrate=1000000, polarity=0, phase=0)
    ra = mfrc522.MFRC522(spi, machine.Pin(17))
    rd = mfrc522.MFRC522(spi, machine.Pin(20))
    ra.init()
    rd.init()
    d.add(Card(UID7))
    assert ra.read_uid() is None
    assert rd.read_uid() == UID7
    assert all(len(f) != 9 for f, _ in a.frames)


run(globals())
