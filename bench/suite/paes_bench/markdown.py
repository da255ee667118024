"""Number formats and Markdown tables for tables.md."""

import math


def fmt(v, spec=".3f"):
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if spec == ".3f" and v != 0 and abs(v) < 0.1:
            return f"{v:.2g}"
        return format(v, spec)
    return str(v)


def ms(s):
    return f"{s * 1000:.3f}" if s < 0.01 else f"{s * 1000:.1f}"


def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"
