"""Sizes in binary units (K = 1024), as every table and plot of the suite labels them."""

KIB = 1024
MIB = 1024 * 1024
GIB = 1024 * MIB


def human(n):
    """Bytes as a short label in binary units (K = 1024)."""
    for unit, size in (("G", GIB), ("M", MIB), ("K", KIB)):
        if n >= size:
            v = n / size
            return f"{v:.0f}{unit}" if abs(v - round(v)) < 0.05 else f"{v:.1f}{unit}"
    return f"{n}B"
