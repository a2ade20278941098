"""What `storagelab lab` does, one line per subcommand: its --help and each subcommand's (one source)."""

from __future__ import annotations

SUBCOMMANDS = {
    "fio": "run a fio plan against a folder (presets: smoke, standard = CrystalDiskMark's four tests, the studies'), "
    "save, label and ingest it",
    "bonnie": "run bonnie++ against a folder, save, label and ingest it",
    "zfs-sweep": "Ars-style ZFS topology x recordsize sweep (prints its commands; runs only with --yes and --disks)",
}

DESCRIPTION = (
    "Without a subcommand: JupyterLab on the project, with the storagelab kernel and the database ready (options "
    "it does not know go to JupyterLab, e.g. --no-browser --port 8888).\n\nmeasure your own disks (each has --help):\n"
    + "\n".join(f"  {name:<10} {text}" for name, text in SUBCOMMANDS.items())
)
