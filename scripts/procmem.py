"""A process's memory as Linux reports it, for the memory scripts beside this file."""


def rss(pid, field):
    """`field` of /proc/PID/status in bytes: `VmRSS` (now) or `VmHWM` (the peak)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field}")


def reset_peak(pid):
    """Starts `VmHWM` again from the current RSS."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
