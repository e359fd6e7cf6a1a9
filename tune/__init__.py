"""Tuning: tasks (a model's distinct kernels), tuners and an XGBoost cost
model choosing configs, measurement in worker processes (or on Ray), records (the format, in driver/records.py, is what `xtc.compile` reads)
of what was measured, and the model-wide scheduler (`xtc.tune`, `xtc tune`)."""
