"""MFRC522 (RC522 board) driver over machine.SPI: reads the UID of one ISO 14443-A tag.

Just what a slot needs: wake a tag (WUPA, so a tag halted by the last poll answers
again), run the anticollision cascade (4-, 7- or 10-byte UIDs, BCC checked), SELECT
each level with its CRC_A, and halt the tag (HLTA). NTAG21x stickers have 7-byte UIDs;
MIFARE Classic cards mostly 4-byte ones.

Two tags in one field are a collision: reported as CollisionError, never resolved to
one of them (a slot holds one piece; two tags there is not a reading).

CRC_A is computed here in software rather than by the chip's CRC coprocessor: one SPI
round trip less per frame, and the same function checks the tag's answers.
"""

from machine import SPI, Pin
from micropython import const

# Registers (MFRC522 datasheet, section 9).
_COMMAND = const(0x01)
_COM_IRQ = const(0x04)
_ERROR = const(0x06)
_FIFO_DATA = const(0x09)
_FIFO_LEVEL = const(0x0A)
_CONTROL = const(0x0C)
_BIT_FRAMING = const(0x0D)
_COLL = const(0x0E)
_MODE = const(0x11)
_TX_CONTROL = const(0x14)
_TX_ASK = const(0x15)
_T_MODE = const(0x2A)
_T_PRESCALER = const(0x2B)
_T_RELOAD_H = const(0x2C)
_T_RELOAD_L = const(0x2D)
RF_CFG = const(0x26)  # RFCfgReg: bits 6..4 RxGain (reset 0x48: 33 dB)
VERSION_REG = const(0x37)

# Commands.
_IDLE = const(0x00)
_TRANSCEIVE = const(0x0C)
_SOFT_RESET = const(0x0F)
_POWER_DOWN = const(0x10)  # CommandReg bit

# ISO/IEC 14443-3 type A.
REQA = const(0x26)
WUPA = const(0x52)
HLTA = const(0x50)
CASCADE_TAG = const(0x88)
SEL_CL = (0x93, 0x95, 0x97)  # SEL codes of cascade levels 1, 2, 3
NVB_ANTICOLLISION = const(0x20)  # 2 bytes sent: ask for the rest of the UID
NVB_SELECT = const(0x70)  # 7 bytes sent: the whole UID CLn and BCC
SAK_CASCADE = const(0x04)  # SAK bit: UID not complete, go to the next level

# ErrorReg bits.
_ERR_PROTOCOL = const(0x01)
_ERR_PARITY = const(0x02)
_ERR_COLL = const(0x08)
_ERR_BUFFER = const(0x10)

# ComIrqReg bits.
_IRQ_TIMER = const(0x01)
_IRQ_IDLE = const(0x10)
_IRQ_RX = const(0x20)

# The chip's timer ends a transceive after 25 ms without an answer; this bounds
# our wait for it in case the chip itself does not answer.
_MAX_POLLS = const(2000)


class CardError(Exception):
    """An exchange with a tag failed: the tag's answer cannot be trusted."""


class NoCardError(CardError):
    """No tag answered before the chip's timer ran out."""


class CollisionError(CardError):
    """More than one tag answered at once."""


class CheckError(CardError):
    """An answer failed its BCC or CRC_A check, or had the wrong length."""


class ChipError(CardError):
    """The MFRC522 reported a protocol, parity or buffer error, or never finished."""


# RxGain code -> receiver gain in dB (MFRC522 datasheet, RFCfgReg): codes 2 and 3
# repeat 18 and 23 dB, so only the six distinct gains are offered.
RX_GAIN_CODE = {18: 0, 23: 1, 33: 4, 38: 5, 43: 6, 48: 7}


def crc_a(data):
    """ISO 14443-A CRC (CRC-16, reflected polynomial 0x8408, preset 0x6363), LSB first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def bcc(data):
    """Block check character of a UID CLn: XOR of its four bytes."""
    check = 0
    for byte in data:
        check ^= byte
    return check


class MFRC522:
    """One MFRC522 on a shared SPI bus, selected by its own chip-select pin.

    :param spi: a machine.SPI (mode 0, up to 10 MHz).
    :param cs: the chip-select machine.Pin (output; idle high).
    """

    def __init__(self, spi: SPI, cs: Pin) -> None:
        self.spi = spi
        self.cs = cs
        self.cs.init(cs.OUT, value=1)
        self._buf = bytearray(2)

    def _write(self, reg, value):
        self.cs.value(0)
        try:
            self.spi.write(bytes(((reg << 1) & 0x7E, value)))
        finally:
            self.cs.value(1)

    def _read(self, reg):
        self.cs.value(0)
        try:
            self.spi.write_readinto(bytes((0x80 | ((reg << 1) & 0x7E), 0)), self._buf)
        finally:
            self.cs.value(1)
        return self._buf[1]

    def _set_bits(self, reg, mask):
        self._write(reg, self._read(reg) | mask)

    def _clear_bits(self, reg, mask):
        self._write(reg, self._read(reg) & ~mask)

    def init(self):
        """Soft-reset the chip, set its timeout and 100 % ASK, and turn the antenna on."""
        self._write(_COMMAND, _SOFT_RESET)
        for _ in range(_MAX_POLLS):  # PowerDown stays set until the reset is done
            if not self._read(_COMMAND) & _POWER_DOWN:
                break
        self._write(_T_MODE, 0x80)  # timer starts at the end of each transmission
        self._write(_T_PRESCALER, 0xA9)  # 13.56 MHz / (2 * 0xA9 + 1): about 40 kHz
        self._write(_T_RELOAD_H, 0x03)  # 1000 ticks: 25 ms
        self._write(_T_RELOAD_L, 0xE8)
        self._write(_TX_ASK, 0x40)  # 100 % ASK modulation, as type A requires
        self._write(_MODE, 0x3D)  # CRC preset 0x6363
        self._set_bits(_TX_CONTROL, 0x03)  # antenna drivers TX1 and TX2 on

    def set_rx_gain(self, code):
        """RxGain (RFCfgReg bits 6..4) to `code`, 0..7 (see RX_GAIN_DB); other bits kept."""
        self._write(RF_CFG, (self._read(RF_CFG) & 0x8F) | ((code & 0x07) << 4))

    def rx_gain(self):
        """The RxGain code now set, 0..7."""
        return (self._read(RF_CFG) >> 4) & 0x07

    def version(self):
        """VersionReg: 0x91 or 0x92 for a genuine MFRC522, other values for clones."""
        return self._read(VERSION_REG)

    def present(self):
        """False if no chip answers on the bus (MISO stuck low or high)."""
        return self.version() not in (0x00, 0xFF)

    def transceive(self, data, tx_last_bits=0):
        """Send a frame (its last byte `tx_last_bits` long, 0 = 8) and return the answer.

        :raises NoCardError: nothing answered.
        :raises CollisionError: several tags answered at once.
        :raises ChipError: a protocol, parity or buffer error, or the chip hung.
        """
        self._write(_COMMAND, _IDLE)
        self._write(_COM_IRQ, 0x7F)  # clear all interrupt flags
        self._write(_FIFO_LEVEL, 0x80)  # flush the FIFO
        for byte in data:
            self._write(_FIFO_DATA, byte)
        self._write(_BIT_FRAMING, tx_last_bits & 0x07)
        self._write(_COMMAND, _TRANSCEIVE)
        self._set_bits(_BIT_FRAMING, 0x80)  # StartSend
        irq = 0
        for _ in range(_MAX_POLLS):
            irq = self._read(_COM_IRQ)
            if irq & (_IRQ_RX | _IRQ_IDLE | _IRQ_TIMER):
                break
        self._clear_bits(_BIT_FRAMING, 0x80)
        if not irq & (_IRQ_RX | _IRQ_IDLE):
            if irq & _IRQ_TIMER:
                raise NoCardError("no answer")
            raise ChipError("transceive never finished")
        error = self._read(_ERROR)
        if error & _ERR_COLL:
            raise CollisionError("collision at bit %d" % (self._read(_COLL) & 0x1F))
        if error & (_ERR_PROTOCOL | _ERR_PARITY | _ERR_BUFFER):
            raise ChipError("error register 0x%02X" % error)
        count = self._read(_FIFO_LEVEL) & 0x7F
        answer = bytearray(count)
        for i in range(count):
            answer[i] = self._read(_FIFO_DATA)
        return bytes(answer)

    def wake(self):
        """WUPA (wakes idle and halted tags); returns the ATQA, 2 bytes."""
        atqa = self.transceive(bytes((WUPA,)), 7)
        if len(atqa) != 2:
            raise CheckError("ATQA of %d bytes" % len(atqa))
        return atqa

    def select(self):
        """Anticollision and SELECT through every cascade level; returns the UID."""
        uid = bytearray()
        for sel in SEL_CL:
            part = self.transceive(bytes((sel, NVB_ANTICOLLISION)))
            if len(part) != 5 or bcc(part[:4]) != part[4]:
                raise CheckError("bad UID CLn or BCC: %s" % part.hex())
            frame = bytes((sel, NVB_SELECT)) + part
            sak = self.transceive(frame + crc_a(frame))
            if len(sak) != 3 or crc_a(sak[:1]) != sak[1:]:
                raise CheckError("bad SAK or CRC_A: %s" % sak.hex())
            if not sak[0] & SAK_CASCADE:
                uid.extend(part[:4])
                return bytes(uid)
            if part[0] != CASCADE_TAG:
                raise CheckError("cascade without cascade tag: %s" % part.hex())
            uid.extend(part[1:4])
        raise CheckError("UID longer than three cascade levels")

    def halt(self):
        """HLTA: the tag stops answering REQA (a WUPA wakes it). It sends no answer."""
        frame = bytes((HLTA, 0))
        try:
            self.transceive(frame + crc_a(frame))
        except NoCardError:
            pass  # the expected outcome: a halted tag is silent

    def read_uid(self):
        """The UID of the one tag in the field, or None without one.

        :raises CardError: a damaged exchange or several tags (not NoCardError).
        """
        try:
            self.wake()
        except NoCardError:
            return None
        uid = self.select()
        self.halt()
        return uid
