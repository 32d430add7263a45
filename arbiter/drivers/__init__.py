"""The device's hardware behind small interfaces: slot readers, LEDs and buzzer.

Below the device: each driver takes its backend as a parameter (a gpiozero
``pin_factory``, an SMBus, a serial port factory) so tests pass in mocks.
Imports hardware libraries lazily, never at package import.
"""
