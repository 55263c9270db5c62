#!/usr/bin/env python3
"""Writes a directory as a one-layer OCI image archive that `ctr images import` accepts.

    oci-image.py ROOTFS REF[,REF...] OUT.tar [--entrypoint PATH] [--cmd ARG ...] [--arch ARCH] [--gzip]

Several comma-separated references name the same image (one index entry each), so one archive serves every tag.
ARCH is Go's name for the architecture (amd64, arm64), as the image config spells it; amd64 by default.
Used by the release (build-image.sh, the nftproxy image) and by the node e2e harness's images.

No registry and no container builder are involved: the layer is a tar of ROOTFS with owners reset to root and
times to zero, so the same input always gives the same digest; uncompressed, or with --gzip compressed (a gzip
header without a name or time, for the same reason), which a release archive is, at a third of the size.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import tarfile


def layer_of(rootfs):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for top, dirs, files in os.walk(rootfs):
            dirs.sort()
            for name in dirs + sorted(files):
                path = os.path.join(top, name)
                info = tar.gettarinfo(path, os.path.relpath(path, rootfs))
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 0
                if info.isreg():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return out.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rootfs")
    ap.add_argument("ref")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", action="append", default=[])
    ap.add_argument("--cmd", nargs="*", default=None)
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()

    blobs = {}

    def put(data):
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"digest": digest, "size": len(data)}

    tar = layer_of(a.rootfs)
    diff_id = "sha256:" + hashlib.sha256(tar).hexdigest()
    layer_type = "application/vnd.oci.image.layer.v1.tar"
    if a.gzip:
        tar = gzip.compress(tar, compresslevel=6, mtime=0)
        layer_type += "+gzip"
    layer = put(tar)
    config = put(json.dumps({
        "architecture": a.arch, "os": "linux",
        "config": {"Entrypoint": a.entrypoint or None, "Cmd": a.cmd, "WorkingDir": "/",
                   "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }).encode())
    manifest = put(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": dict(mediaType="application/vnd.oci.image.config.v1+json", **config),
        "layers": [dict(mediaType=layer_type, **layer)],
    }).encode())
    refs = a.ref.split(",")
    for ref in refs:
        if ":" not in ref.rsplit("/", 1)[-1]:
            ap.error(f"reference without a tag: {ref!r}")
    index = {"schemaVersion": 2, "manifests": [dict(
        mediaType="application/vnd.oci.image.manifest.v1+json", **manifest,
        platform={"architecture": a.arch, "os": "linux"},
        annotations={"io.containerd.image.name": ref,
                     "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[1]}) for ref in refs]}

    tmp = a.out + ".tmp"
    with tarfile.open(tmp, "w") as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        add("index.json", json.dumps(index).encode())
        for digest, data in blobs.items():
            add("blobs/sha256/" + digest.split(":", 1)[1], data)
    os.replace(tmp, a.out)
    print(" ".join(refs), manifest["digest"])


if __name__ == "__main__":
    main()
