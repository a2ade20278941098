"""fio normal text: the shape of each kind of line (a regular expression each, the fast paths' usual
forms among them) and the schema's column orders. See text.py for the format."""

from __future__ import annotations

import re

from .schema import TABLES

# Tuples rows in the column order of the schema (fio/schema.py)
_PCT_COLUMNS = TABLES["fio_percentiles"].row_columns
_BUCKET_COLUMNS = TABLES["fio_latency_buckets"].row_columns
_DEPTH_COLUMNS = TABLES["fio_iodepths"].row_columns
_JOBS_STATUS = re.compile(r"^\s*Jobs: \d+ \(f=\d+\)")
_JOBS_ETA = re.compile(r"^\s*Jobs: \d+ \(f=\d+\).*?\[eta [^\]]*\]\s*")
_VERSION = re.compile(r"^\s*fio[- ](\d+)\.(\d+)(?:\.\d+)?\S*\s*$")
# filesetup.c: 3.x "name: Laying out IO file (1 file / 1024MiB)" ("files (2 files / total 2048MiB)"), 2.x
# "name: Laying out IO file(s) (1 file(s) / 512MB)"; both print extend_size >> 20: MiB in either spelling
_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S.*?)[ \t#]*$")  # a Markdown (ATX) heading
_LAYOUT = re.compile(
    r"^(?P<name>.*?): Laying out IO file(?:s|\(s\))? \((?P<files>\d+) file(?:s|\(s\))? / (?:total )?(?P<mib>\d+)Mi?B\)"
)
_PREAMBLE = re.compile(
    r"^(?P<name>.*?): \(g=(?P<g>\d+)\): rw=(?P<rw>[^,]+), bs=(?P<bs>.*?), "
    r"ioengine=(?P<engine>[^,]+?), iodepth=(?P<depth>\d+)\s*$"
)
_PREAMBLE_CUE = re.compile(r"^.*?: \(g=\d+\): rw=")  # a preamble line, read or not
_HEADER_CUE = re.compile(r": \(groupid=\d+, jobs=\d+\): err=")
_HEADER_NEAR = re.compile(r": \(groupid=[^)]*\): err=")  # a job header, perhaps a damaged one
_HEADER_ERR = re.compile(r": \([^()]*\): err=")  # the same with a damaged 'groupid' (reliability-34)
_HEADER = re.compile(
    r"^(?P<name>.*?): \(groupid=(?P<gid>\d+), jobs=(?P<jobs>\d+)\): "
    r"err=\s*(?P<err>-?\d+)(?: \((?P<errtext>.*)\))?: pid=(?P<pid>\d+)"
    r"(?::\s*(?P<time>.*?))?\s*$"
)
_DIR_CUE = re.compile(r"^\s*(read|write|trim|mixed)\s?: (IOPS|io)=")
_DIR3 = re.compile(
    r"^\s*(?P<dir>read|write|trim|mixed): IOPS=(?P<iops>[^,]+), BW=(?P<bw>[^\s(]+) "
    r"\((?P<bw2>[^)]*)\)\((?P<io>[^/)]+)/(?P<runt>\d+)msec\)(?P<tail>;.*)?\s*$"
)
_DIR2 = re.compile(
    r"^\s*(?P<dir>read|write|trim|mixed)\s?: io=(?P<io>[^,]+), bw=(?P<bw>[^,]+), "
    r"iops=(?P<iops>[^,]+), runt=\s*(?P<runt>\d+)\s*msec\s*$"
)
_SYNC_HEAD = re.compile(r"^\s*fsync/[a-z_/]+:\s*$")
_LAT_CUE = re.compile(r"^\s*(?P<label>[A-Za-z][\w /]*?)\s*\((?P<unit>nsec|usec|msec)\)\s*:\s*min=")
_LAT = re.compile(r"^\s*(?P<label>[A-Za-z][\w /]*?)\s*\((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<rest>min=.*)$")
_PCT_TITLE = re.compile(r"^\s*(?P<pre>\S.*?) percentiles \((?P<unit>nsec|usec|msec)\)\s*:\s*$")
_PCT_LINE = re.compile(r"^\s*\|(?:\s*[0-9.]+th=\[\s*[0-9]+\]\s*,?)+\s*$")
_PCT_ENTRY = re.compile(r"([0-9.]+)th=\[\s*([0-9]+)\]")
_BW = re.compile(r"^\s*bw\s*\((?P<label>[^)]*)\)\s*:\s*(?P<rest>.*)$")
_IOPS = re.compile(r"^\s*iops\s*:\s*(?P<rest>min=.*)$")
_LATDIST = re.compile(r"^\s*lat \((?P<unit>nsec|usec|msec)\)\s*:\s*(?P<rest>.*)$")
# the same, but not a latency line ('lat (usec): min=', cut short: the general way reads it as one, and fails)
_LATDIST_FAST = re.compile(r"^\s*lat \((?P<unit>nsec|usec|msec)\)\s*:\s*+(?!min=)(?P<rest>.*)$")
_BUCKETS = re.compile(r"^(?:\s*(?:>=)?[0-9]+=[0-9.]+%\s*,?)+\s*$")
_BUCKET = re.compile(r"(>=)?([0-9]+)=([0-9.]+)%")
_CPU = re.compile(r"^\s*cpu\s*:\s*(?P<rest>.*)$")
_DEPTH = re.compile(r"^\s*(?P<kind>IO depths|submit|complete)\s*:\s*(?P<rest>.*)$")
_ISSUED_CUE = re.compile(r"^\s*issued\b[^:]*:")
# issued: 3.4+ 'total=R,W,T,S short=... dropped=...', 2.17-3.3 'total=R,W,T, short=..., dropped=...',
# 2.0.x-2.16 'total=r=R/w=W/d=T, short=..., drop=...' (2.0.x without drop), fio 1.x-2.0 'issued r/w/d:
# total=R/W/T, short=R/W/T'
_ISSUED = re.compile(r"^\s*issued(?: rwts?| r/w(?:/d)?)?\s*:\s*(?P<body>total=.*?)\s*$")
_ISSUED_PART = re.compile(r"(total|short|drop|dropped)=(\S+?),?(?=\s+(?:short|drop|dropped)=|\s*$)")
_KNOWN_SKIPPED = re.compile(r"^\s*(Description\s*:|errors\s*:|latency\s*:|steadystate\s*:)")
# fio's latency target line: with no target (target=0) its depth is the job's iodepth (fio's lat_target_init sets
# latency_qd = iodepth), printed where a text output has no preamble line with iodepth=
_TARGET_NONE = re.compile(r"\s*latency\s*: target=0,")
_TARGET_DEPTH = re.compile(r"^\s*latency\s*: target=0, .*\bdepth=(?P<depth>\d+)\s*$", re.M)
_BLOCK_LIFETIME = re.compile(r"^\s*block lifetime percentiles\s*:")
_GROUP_HEAD = re.compile(r"^\s*Run status group (?P<gid>\d+) \(all jobs\):\s*$")
_GROUP_CUE = re.compile(r"^\s*(READ|WRITE|TRIM|MIXED): ")
_GROUP3 = re.compile(
    r"^\s*(?P<dir>READ|WRITE|TRIM|MIXED): bw=(?P<bw>[^\s(]+) \((?P<bw2>[^)]*)\), "
    r"(?P<mn>[^\s(-]+)-(?P<mx>[^\s(]+) \((?P<mn2>[^\s)-]+)-(?P<mx2>[^\s)]+)\), "
    r"io=(?P<io>[^\s(]+) \((?P<io2>[^)]*)\), run=(?P<r0>\d+)-(?P<r1>\d+)msec\s*$"
)
_GROUP2 = re.compile(
    r"^\s*(?P<dir>READ|WRITE|TRIM|MIXED): io=(?P<io>[^,]+), aggrb=(?P<bw>[^,]+), "
    r"minb=(?P<mn>[^,]+), maxb=(?P<mx>[^,]+), mint=\s*(?P<r0>\d+)\s*msec, "
    r"maxt=\s*(?P<r1>\d+)\s*msec\s*$"
)
_DISK_HEAD = re.compile(r"^\s*Disk stats \(read/write\):\s*$")
_DISK_CUE = re.compile(r"^\s*\S+: ios=")
_JOB_CUE = re.compile(r"^\s*(?:IO depths|cpu)\s+: ")  # lines of a job block, never outside one
_DISK = re.compile(
    r"^\s*(?P<name>\S+): ios=(?P<rio>\d+)/(?P<wio>\d+),(?: sectors=(?P<rsec>\d+)/(?P<wsec>\d+),)?"
    r" merge=(?P<rm>\d+)/(?P<wm>\d+), ticks=(?P<rt>\d+)/(?P<wt>\d+), in_queue=(?P<q>\d+),"
    r" util=(?P<util>[0-9]+(?:\.[0-9]+)?)%"
    r"(?:, aggrios=(?P<ario>\d+)/(?P<awio>\d+),(?: aggsectors=(?P<arsec>\d+)/(?P<awsec>\d+),)?"
    r" aggrmerge=(?P<arm>\d+)/(?P<awm>\d+), aggrticks=(?P<art>\d+)/(?P<awt>\d+),"
    r" aggrin_queue=(?P<aq>\d+), aggrutil=(?P<autil>[0-9]+(?:\.[0-9]+)?)%)?\s*$"
)
_PAIRS = re.compile(r"(\w+)=\s*([^,]*?)\s*(?=,|$)")
_LEAD_NUM = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?)")
_SI_UNIT = re.compile(r"[0-9.]\s*[kKMGTPE](?:B|bit)")
_IEC_UNIT = re.compile(r"[0-9.]\s*[KMGTPE]i(?:B|bit)")

_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]*)?")
# fast paths: the usual form of a line with every number in a plain form; a line that does not
# match goes the general way (same values for the lines both read, so only speed differs)
_D = r"(-?[0-9]+(?:\.[0-9]*)?)"
_V = rf"\s*{_D}\s*"  # a value with the blanks fio pads it with
_LAT_FAST = re.compile(
    rf"\s*(slat|clat|lat|sync) ?\((nsec|usec|msec)\): min=\s*([0-9]+(?:\.[0-9]*)?)([kKMGTPE]?)\s*, "
    rf"max=\s*([0-9]+(?:\.[0-9]*)?)([kKMGTPE]?)\s*, avg={_V}, stdev={_V}$"
)
_BW_FAST = re.compile(
    rf"\s*bw \(([^)]*)\): min={_V}, max={_V}, per=\s*{_D}%\s*, avg={_V}, stdev={_V}"
    r"(?:, samples=\s*([0-9]+)\s*)?$"
)
_IOPS_FAST = re.compile(rf"\s*iops\s*: min={_V}, max={_V}, avg={_V}, stdev={_V}(?:, samples=\s*([0-9]+)\s*)?$")
_ISSUED_FAST = re.compile(
    r"\s*issued rwts: total=([0-9]+),([0-9]+),([0-9]+),([0-9]+) "
    r"short=([0-9]+),([0-9]+),([0-9]+),([0-9]+) "
    r"dropped=([0-9]+),([0-9]+),([0-9]+),([0-9]+)\s*$"
)
_P = r"\s*([0-9]+(?:\.[0-9]*)?)th=\[\s*([0-9]+)\]"  # one percentile entry
_PCT_FAST = re.compile(rf"\s*\|{_P},{_P},{_P},{_P}(,?)\s*$")  # a full line of four
_E = r"([0-9]+)=([0-9]+(?:\.[0-9]*)?)%"  # one IO depth entry
_DEPTHS_FAST = re.compile(rf"\s*(IO depths|submit|complete)\s*: {_E}, {_E}, {_E}, {_E}, {_E}, {_E}, >={_E}\s*$")
_DEPTH_KINDS = {"IO depths": "depth", "submit": "submit", "complete": "complete"}
_CPU_FAST = re.compile(
    r"\s*cpu\s*: usr=([0-9]+(?:\.[0-9]*)?)%, sys=([0-9]+(?:\.[0-9]*)?)%, ctx=([0-9]+), majf=([0-9]+), minf=([0-9]+)\s*$"
)
_STATES = re.compile(r"^\s*states\s*:")
_LEGACY_LABEL = re.compile(r"([KMGPE])(B|bit)/s")
_LEGACY_SIZE = re.compile(r"\s*([0-9.]+)\s*([KMGPE]?)\s*(B|bit)?(\s*/s)?\s*")
_ISSUED_RWD = re.compile(r"r=(\d+)/w=(\d+)(?:/d=(\d+))?")
_ISSUED_COUNTS = re.compile(r"\d+(?:,\d+){2,3}|\d+(?:/\d+){1,2}")
_COMMA_SLASH = re.compile(r"[,/]")
_BS_RANGE = re.compile(r"([0-9.]+\s*[A-Za-z]*)-([0-9.]+\s*[A-Za-z]*)")
_BS_PIECES = re.compile(r"\s*[/,]\s*")  # 2.x: 4K-4K/4K-4K/4K-4K; 3.x: (R) 4096B-4096B, (W) ...
_BS_LABEL = re.compile(r"^\([RWT]\)\s*")
