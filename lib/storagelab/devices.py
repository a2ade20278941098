"""What kind of device a benchmark ran on, and the physical range of that kind: results beyond it were served
by a cache (the page cache, the ARC, a RAID controller's or a hypervisor's), not by the device.

The facts come from the lab's description of the target (``lab.describe_device``: lsblk and /sys/block):
the rotational flag, the transport (sata, sas, nvme, usb, ...), the kernel driver (virtio_blk, xen), the model.
The bounds are the links' and mechanisms' own ceilings, generous on purpose: a flag says "no device of this
kind delivers this", never "this device is slow". ``--device-limit`` remains for a device's exact figure.

| class | sequential bound | random 4K bound | why |
| --- | --- | --- | --- |
| hdd | 300 MB/s | 600 IOPS | the fastest single-actuator 3.5" drives stream ~285 MB/s on their outer tracks; a seek plus half a rotation at 15k rpm is ~5 ms (NCQ at depth roughly doubles a drive's IOPS) |
| sata-ssd | 600 MB/s | 100,000 IOPS | SATA III: 6 Gb/s, 8b/10b coding -> 600 MB/s; the AHCI link tops out near 100k 4K IOPS |
| sas | 2,400 MB/s | - | SAS-4: 24 Gb/s (22.5 Gb/s of data) per lane |
| usb | 1,250 MB/s | - | USB 3.2 Gen 2: 10 Gb/s (USB 2 is 60 MB/s: lsblk does not say which) |
| nvme | 16,000 MB/s | - | PCIe 5.0 x4: ~15.75 GB/s |
| virtual | none | none | a virtio/Xen/VMware disk: the host's cache and storage serve it; every figure is the VM's I/O path |
| stacked | none | none | not a disk: a loop (a file on another filesystem: on tmpfs, RAM), md or dm (other devices), zram (RAM) or nbd (the network) device; every figure is what backs it |

A virtio disk reports ``rotational=1`` (/dev/vda here): the driver decides before the flag does.
"""

from __future__ import annotations

from dataclasses import dataclass

from .units import MB

VIRTUAL_DRIVERS = ("virtio_blk", "virtio_scsi", "xen_blkfront", "xen-blkfront", "vmw_pvscsi", "hv_storvsc")
VIRTUAL_MODELS = ("QEMU", "VBOX", "VIRTUAL DISK", "VMWARE", "MSFT VIRTUAL", "XEN")
# block devices the kernel makes of something else: a file (loop), other devices (md, dm), RAM (zram), the network (nbd)
STACKED_PREFIXES = ("loop", "md", "dm-", "zram", "nbd")
STACKED_KINDS = {"loop": "loop", "md": "md (software RAID)", "dm-": "device-mapper", "zram": "zram", "nbd": "nbd"}


@dataclass(frozen=True)
class DeviceClass:
    name: str  # hdd | sata-ssd | sas | usb | nvme | virtual | stacked | unknown
    seq_bytes_per_s: float | None  # no device of the class streams faster (None: no bound known)
    rand4k_iops: float | None  # no device of the class does more random 4K I/Os per second
    why: str  # the fact that decided the class


CLASSES = {
    "hdd": (300 * MB, 600.0),
    "sata-ssd": (600 * MB, 100_000.0),
    "sas": (2_400 * MB, None),
    "usb": (1_250 * MB, None),
    "nvme": (16_000 * MB, None),
    "virtual": (None, None),
    "stacked": (None, None),
    "unknown": (None, None),
}


def _make(name: str, why: str) -> DeviceClass:
    seq, iops = CLASSES[name]
    return DeviceClass(name, seq, iops, why)


def classify(device: dict) -> DeviceClass:
    """The class of one device from the lab's facts (keys of ``lab.describe_device``: name, model, rota, tran,
    driver)."""
    name = str(device.get("name") or device.get("device") or "").removeprefix("/dev/")
    driver = (device.get("driver") or "").lower()
    model = (device.get("model") or "").upper()
    tran = (device.get("tran") or "").lower()
    if name.startswith(STACKED_PREFIXES):
        return _make("stacked", stacked_why(name, device))
    if driver in VIRTUAL_DRIVERS or name.startswith(("vd", "xvd")):
        return _make("virtual", f"driver {driver or 'virtio'} ({name})")
    if any(m in model for m in VIRTUAL_MODELS):
        return _make("virtual", f"model {device.get('model')}")
    if tran == "nvme" or name.startswith("nvme"):
        return _make("nvme", "NVMe transport")
    if tran == "usb":
        return _make("usb", "USB transport")
    rota = device.get("rota")
    if str(rota) in ("1", "True", "true"):
        return _make("hdd", "rotational=1")
    if tran == "sas":
        return _make("sas", "SAS transport")
    if tran in ("sata", "ata") and str(rota) in ("0", "False", "false"):
        return _make("sata-ssd", "SATA, rotational=0")
    return _make("unknown", "no transport or rotational flag known")


def stacked_why(name: str, device: dict) -> str:
    """'loop device loop0, backed by /dev/shm/h5/l0.img on tmpfs (RAM)': what a stacked device is made of, from the
    lab's facts (``lab.system.backing_of``: ``backing``, ``backing_fstype``); 'what backs it is not recorded'."""
    kind = next(v for k, v in STACKED_KINDS.items() if name.startswith(k))
    backing, fs = device.get("backing"), device.get("backing_fstype")
    if not backing:
        return f"{kind} device {name} (what backs it is not recorded)"
    ram = " (RAM)" if fs in ("tmpfs", "ramfs") else ""
    return f"{kind} device {name}, backed by {backing}" + (f" on {fs}{ram}" if fs else "")


def not_a_disk(whys: list[str]) -> str:
    """The flag of a result measured on stacked devices (``stacked_why`` of each), free of ';' (the lab's notes
    separate their entries with it)."""
    return (
        f"not a disk: {' and '.join(whys)}: these figures measure what backs it through the kernel's block layer, "
        "not a device of its own (run on the disk itself to measure one)"
    )


def _mb(x: float) -> str:
    return f"{x / MB:,.0f} MB/s"


def beyond_class(
    devices: list[dict], *, rw: str, bs_bytes: int | None, bw_bytes_per_s: float | None, iops: float | None
) -> list[str]:
    """Flags for one direction's result against the physical range of the class of the devices it ran on.
    Several devices (a pool, an array) add their bounds: the flag then says the sum was passed."""
    if not devices:
        return []
    classes = [classify(d) for d in devices]
    stacked = [c for c in classes if c.name == "stacked"]
    if stacked:
        return [not_a_disk([c.why for c in stacked])]
    virtual = [c for c in classes if c.name == "virtual"]
    if virtual:
        return [
            f"virtual disk ({virtual[0].why}): the host's cache and storage may serve these figures, which measure "
            "the VM's I/O path, not a device (give --device-limit with the real device's figure)"
        ]
    flags = []
    # what the data shows is a figure beyond the class's range; a cache is the likely cause, a misread class the other
    read_as = f"class read from {', '.join(dict.fromkeys(c.why for c in classes))}"
    cause = "likely served by a cache, or the device is not of that class"
    seq = [c.seq_bytes_per_s for c in classes]
    if bw_bytes_per_s and all(s is not None for s in seq) and bw_bytes_per_s > sum(seq):
        kinds = "+".join(sorted({c.name for c in classes}))
        flags.append(
            f"{rw} at {_mb(bw_bytes_per_s)} is beyond what {len(classes)} {kinds} device(s) can transfer "
            f"({_mb(sum(seq))}; {read_as}): {cause}"
        )
    rand = [c.rand4k_iops for c in classes]
    small = bs_bytes is not None and bs_bytes <= 16 * 1024
    if rw.startswith("rand") and small and iops and all(r is not None for r in rand) and iops > sum(rand):
        kinds = "+".join(sorted({c.name for c in classes}))
        flags.append(
            f"{rw} at {iops:,.0f} IOPS is beyond what {len(classes)} {kinds} device(s) can do "
            f"({sum(rand):,.0f} IOPS; {read_as}): {cause}"
        )
    return flags
