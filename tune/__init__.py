"""Tuning: tasks (a model's distinct kernels), tuners and an XGBoost cost
model choosing configs, measurement in worker processes (or on Ray), records
of what was measured (their format is driver/records.py, which `xtc.compile`
reads), and the model-wide scheduler (`xtc.tune`, `xtc tune`)."""
