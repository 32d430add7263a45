"""A simulated MFRC522 on the fake SPI bus, with ISO 14443-A tags in its field.

MicroPython code. The chip side models what the driver relies on: the SPI address
byte, the FIFO, CommandReg (SoftReset, Transceive), StartSend, the interrupt, error
and collision registers, the timer (no answer -> TimerIRq only when TAuto is set) and
the antenna switch (no field, no answer). The tag side follows ISO/IEC 14443-3: the
IDLE / READY / ACTIVE / HALT states, REQA / WUPA, anticollision and SELECT per cascade
level (CRC_A checked by the tag, as a real tag ignores a frame with a bad CRC), HLTA.
Several tags answering differently set CollErr. Faults on demand: a wrong BCC, a
wrong CRC_A on the SAK.
"""

# Registers and bits (MFRC522 datasheet), spelled out again here on purpose: the
# fake must not share the driver's constants, or a wrong constant would pass.
COMMAND = 0x01
COM_IRQ = 0x04
ERROR = 0x06
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
COLL = 0x0E
TX_CONTROL = 0x14
T_MODE = 0x2A
VERSION = 0x37

TRANSCEIVE = 0x0C
SOFT_RESET = 0x0F


def crc_a(data):
    """CRC_A bit by bit (reflected CRC-16 0x1021 = 0x8408, preset 0x6363), LSB first."""
    crc = 0x6363
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return bytes((crc & 0xFF, crc >> 8))


class Card:
    """An ISO 14443-A tag: a 4-, 7- or 10-byte UID and its SAK at the last level."""

    def __init__(self, uid, sak=None):
        if len(uid) not in (4, 7, 10):
            raise ValueError("UIDs have 4, 7 or 10 bytes")
        self.uid = bytes(uid)
        self.sak = sak if sak is not None else (0x08 if len(uid) == 4 else 0x00)
        self.state = "IDLE"
        self.was_halted = False
        self.level = 0
        self.bad_bcc = 0  # answer this many anticollisions with a wrong BCC
        self.bad_crc = 0  # answer this many SELECTs with a wrong CRC_A
        self.cascade_byte = 0x88  # a broken tag may send another byte in its place
        self.selects = 0

    def levels(self):
        """UID CLn per cascade level, cascade tag 0x88 first where more follow."""
        u = self.uid
        ct = bytes((self.cascade_byte,))
        if len(u) == 4:
            return [u]
        if len(u) == 7:
            return [ct + u[:3], u[3:]]
        return [ct + u[:3], ct + u[3:6], u[6:]]

    def atqa(self):
        return bytes(({4: 0x04, 7: 0x44, 10: 0x84}[len(self.uid)], 0x00))

    def _drop(self):
        """An unexpected frame sends a READY or ACTIVE tag back to IDLE (or HALT)."""
        self.state = "HALT" if self.was_halted else "IDLE"
        self.level = 0

    def receive(self, frame, last_bits):
        """The tag's answer to a frame, or None (silent)."""
        if last_bits == 7 and len(frame) == 1 and frame[0] in (0x26, 0x52):
            if self.state == "IDLE" or (self.state == "HALT" and frame[0] == 0x52):
                self.was_halted = self.state == "HALT"
                self.state = "READY"
                self.level = 0
                return self.atqa()
            if self.state != "HALT":
                self._drop()
            return None
        if last_bits != 0:
            return None
        if self.state == "ACTIVE" and len(frame) == 4 and frame[:2] == b"\x50\x00":
            if crc_a(frame[:2]) == frame[2:]:
                self.state = "HALT"
                self.was_halted = True
            return None
        if self.state != "READY":
            return None
        levels = self.levels()
        sel = (0x93, 0x95, 0x97)[self.level]
        part = levels[self.level]
        check = part[0] ^ part[1] ^ part[2] ^ part[3]
        if frame == bytes((sel, 0x20)):
            if self.bad_bcc:
                self.bad_bcc -= 1
                check ^= 0x01
            return part + bytes((check,))
        if len(frame) == 9 and frame[:2] == bytes((sel, 0x70)):
            if crc_a(frame[:7]) != frame[7:]:
                self._drop()
                return None
            if frame[2:7] != part + bytes((check,)):
                return None  # selects another tag
            self.selects += 1
            if self.level + 1 < len(levels):
                self.level += 1
                sak = 0x04
            else:
                self.state = "ACTIVE"
                sak = self.sak
            answer = bytes((sak,)) + crc_a(bytes((sak,)))
            if self.bad_crc:
                self.bad_crc -= 1
                answer = answer[:2] + bytes((answer[2] ^ 0xFF,))
            return answer
        self._drop()
        return None


class FakeMfrc522:
    """The chip: registers over SPI and the tags in its field (`cards`)."""

    def __init__(self, cs_id, version=0x92):
        self.cs_id = cs_id
        self.version = version
        self.cards = []
        self.regs = bytearray(0x40)
        self.fifo = bytearray()
        self.frames = []  # (frame, last bits) of every transmission, for the checks
        self.resets = 0
        self._watched = None
        self._addr = None
        self._read_mode = False
        self.soft_reset()

    def soft_reset(self):
        self.regs = bytearray(0x40)
        self.regs[VERSION] = self.version
        self.regs[0x26] = 0x48  # RFCfgReg's reset value: RxGain 100, 33 dB
        self.fifo = bytearray()
        self.resets += 1

    def add(self, card):
        """A tag enters the field: it powers up IDLE."""
        card.state = "IDLE"
        card.was_halted = False
        card.level = 0
        self.cards.append(card)
        return card

    def remove(self, card):
        self.cards.remove(card)

    # SPI side

    def watch(self, pin):
        if self._watched is not pin:
            self._watched = pin
            pin.listeners.append(self._cs_changed)

    def _cs_changed(self, value):
        if value:
            self._addr = None

    def exchange(self, byte):
        if self._addr is None:
            self._addr = (byte >> 1) & 0x3F
            self._read_mode = bool(byte & 0x80)
            return 0
        if self._read_mode:
            value = self._read(self._addr)
            self._addr = (byte >> 1) & 0x3F
            return value
        self._write(self._addr, byte)
        return 0

    def _read(self, reg):
        if reg == FIFO_DATA:
            if not self.fifo:
                raise IndexError("read from an empty FIFO")
            value = self.fifo[0]
            self.fifo = self.fifo[1:]
            return value
        if reg == FIFO_LEVEL:
            return len(self.fifo)
        return self.regs[reg]

    def _write(self, reg, value):
        if reg == FIFO_DATA:
            self.fifo.append(value)
        elif reg == FIFO_LEVEL:
            if value & 0x80:
                self.fifo = bytearray()
        elif reg == COM_IRQ:
            if value & 0x80:
                self.regs[COM_IRQ] |= value & 0x7F
            else:
                self.regs[COM_IRQ] &= ~value & 0x7F
        elif reg == COMMAND:
            if value & 0x0F == SOFT_RESET:
                self.soft_reset()
            else:
                self.regs[COMMAND] = value
        elif reg == BIT_FRAMING:
            self.regs[BIT_FRAMING] = value & 0x7F
            if value & 0x80 and self.regs[COMMAND] & 0x0F == TRANSCEIVE:
                self._transceive(value & 0x07)
        elif reg != VERSION:
            self.regs[reg] = value

    # radio side

    def _transceive(self, last_bits):
        frame = bytes(self.fifo)
        self.fifo = bytearray()
        self.frames.append((frame, last_bits))
        self.regs[ERROR] = 0
        self.regs[CONTROL] &= 0xF8
        answers = []
        if self.regs[TX_CONTROL] & 0x03 == 0x03:  # both antenna drivers on
            for card in self.cards:
                answer = card.receive(frame, last_bits)
                if answer is not None:
                    answers.append(answer)
        if not answers:
            if self.regs[T_MODE] & 0x80:  # TAuto: the timer runs out
                self.regs[COM_IRQ] |= 0x01
            return
        first = answers[0]
        merged = bytearray(first)
        collision_bit = 0
        for other in answers[1:]:
            for i in range(min(len(other), len(merged))):
                diff = merged[i] ^ other[i]
                if diff and not collision_bit:
                    bit = 0
                    while not diff & (1 << bit):
                        bit += 1
                    collision_bit = i * 8 + bit + 1
                merged[i] |= other[i]
        if collision_bit:
            self.regs[ERROR] |= 0x08
            self.regs[COLL] = collision_bit & 0x1F
            self.regs[COM_IRQ] |= 0x02  # ErrIRq
        self.fifo = merged
        self.regs[COM_IRQ] |= 0x30  # RxIRq and IdleIRq
