"""Reading data: one row reader, samples to judge, eval sets and calibration sets."""
