"""tvmdev: TVM's C Device API and AOT executor harnesses for accelerators on RTOSes."""

__version__ = "0.1.0"
