"""What dgtcast adds to a clock in mode 23, where the computer is in charge (pure)."""
