#!/usr/bin/python3
"""cri.py - a small CRI v1 client for the tests: drives containerd's CRI
plugin over gRPC the way the kubelet does (RunPodSandbox, then
CreateContainer and StartContainer for each container; StopPodSandbox and
RemovePodSandbox to delete the pod), and builds OCI image archives for
`ctr images import` (there is no registry here).

  cri.py SOCKET version
  cri.py SOCKET pod-up SPEC.json      -> {"pod": ID, "containers": {NAME: ID}}
  cri.py SOCKET pod-down POD_ID
  cri.py SOCKET list POD_ID           -> {NAME: STATE}
  cri.py - image OUT.tar IMAGE_NAME ROOTFS_DIR [ENTRYPOINT...]

SPEC.json: {"pod": {"name", "namespace", "uid", "cgroup_parent",
"log_directory", "annotations": {}}, "containers": [{"name", "image",
"command": [], "envs": {}, "mounts": [[HOST, CONTAINER, READONLY]],
"user": UID, "annotations": {}}]}. Pods use the node's network (no CNI
here); each container has its own pid namespace, as v1 pods do.

Message classes come from tests/cri/api.proto, compiled with protoc at
start into a temporary directory; the gRPC calls use grpc's generic
unary-unary API, so no generated service stubs are needed.
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load_api():
    sys.dont_write_bytecode = True
    out = tempfile.mkdtemp(prefix="cri-proto.")
    subprocess.run(["protoc", "-I", HERE, "--python_out", out, "api.proto"], check=True)
    sys.path.insert(0, out)
    try:
        import api_pb2  # noqa: E402
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return api_pb2


class Runtime:
    def __init__(self, socket, api):
        import grpc
        self.api = api
        self.channel = grpc.insecure_channel("unix://" + socket)

    def call(self, method, request, response):
        fn = self.channel.unary_unary(
            "/runtime.v1.RuntimeService/" + method,
            request_serializer=type(request).SerializeToString,
            response_deserializer=response.FromString)
        return fn(request, timeout=120)


def pod_config(api, p):
    ns = api.NamespaceOption(network=api.NODE, pid=api.POD, ipc=api.POD)
    return api.PodSandboxConfig(
        metadata=api.PodSandboxMetadata(name=p["name"], uid=p["uid"],
                                        namespace=p["namespace"], attempt=0),
        log_directory=p.get("log_directory", ""),
        labels={"io.kubernetes.pod.name": p["name"]},
        annotations=p.get("annotations", {}),
        linux=api.LinuxPodSandboxConfig(
            cgroup_parent=p.get("cgroup_parent", ""),
            security_context=api.LinuxSandboxSecurityContext(namespace_options=ns)))


def container_config(api, c):
    sc = api.LinuxContainerSecurityContext(
        namespace_options=api.NamespaceOption(network=api.NODE, pid=api.CONTAINER,
                                              ipc=api.POD))
    if "user" in c:
        sc.run_as_user.value = c["user"]
        sc.run_as_group.value = c["user"]
    return api.ContainerConfig(
        metadata=api.ContainerMetadata(name=c["name"], attempt=0),
        image=api.ImageSpec(image=c["image"]),
        command=c["command"],
        envs=[api.KeyValue(key=k, value=v) for k, v in c.get("envs", {}).items()],
        mounts=[api.Mount(host_path=h, container_path=d, readonly=ro)
                for h, d, ro in c.get("mounts", [])],
        annotations=c.get("annotations", {}),
        log_path=c["name"] + ".log",
        linux=api.LinuxContainerConfig(security_context=sc))


def pod_up(rt, spec):
    api = rt.api
    pc = pod_config(api, spec["pod"])
    pod = rt.call("RunPodSandbox", api.RunPodSandboxRequest(config=pc),
                  api.RunPodSandboxResponse).pod_sandbox_id
    ids = {}
    for c in spec.get("containers", []):
        cid = rt.call("CreateContainer",
                      api.CreateContainerRequest(pod_sandbox_id=pod,
                                                 config=container_config(api, c),
                                                 sandbox_config=pc),
                      api.CreateContainerResponse).container_id
        rt.call("StartContainer", api.StartContainerRequest(container_id=cid),
                api.StartContainerResponse)
        ids[c["name"]] = cid
    return {"pod": pod, "containers": ids}


def pod_down(rt, pod):
    api = rt.api
    rt.call("StopPodSandbox", api.StopPodSandboxRequest(pod_sandbox_id=pod),
            api.StopPodSandboxResponse)
    rt.call("RemovePodSandbox", api.RemovePodSandboxRequest(pod_sandbox_id=pod),
            api.RemovePodSandboxResponse)


def add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def image(out, name, rootfs, entrypoint):
    """An OCI image layout archive of one uncompressed layer."""
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as t:
        for entry in sorted(os.listdir(rootfs)):
            t.add(os.path.join(rootfs, entry), arcname=entry)
    layer = layer.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": entrypoint or None,
                   "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode()
    blobs = {}

    def blob(data, media):
        d = hashlib.sha256(data).hexdigest()
        blobs[d] = data
        return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}

    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": blob(config, "application/vnd.oci.image.config.v1+json"),
        "layers": [blob(layer, "application/vnd.oci.image.layer.v1.tar")]}).encode()
    mdesc = blob(manifest, "application/vnd.oci.image.manifest.v1+json")
    mdesc["annotations"] = {"io.containerd.image.name": name,
                            "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}
    index = json.dumps({"schemaVersion": 2, "manifests": [mdesc]}).encode()
    with tarfile.open(out, "w") as t:
        add_bytes(t, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        add_bytes(t, "index.json", index)
        for d, data in blobs.items():
            add_bytes(t, "blobs/sha256/" + d, data)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    sock, cmd = argv[1], argv[2]
    if cmd == "image":
        image(argv[3], argv[4], argv[5], argv[6:])
        return
    rt = Runtime(sock, load_api())
    api = rt.api
    if cmd == "version":
        v = rt.call("Version", api.VersionRequest(version="v1"), api.VersionResponse)
        print(json.dumps({"runtime_name": v.runtime_name, "runtime_version": v.runtime_version,
                          "runtime_api_version": v.runtime_api_version}))
    elif cmd == "pod-up":
        with open(argv[3]) as f:
            print(json.dumps(pod_up(rt, json.load(f))))
    elif cmd == "pod-down":
        pod_down(rt, argv[3])
    elif cmd == "list":
        r = rt.call("ListContainers",
                    api.ListContainersRequest(filter=api.ContainerFilter(pod_sandbox_id=argv[3])),
                    api.ListContainersResponse)
        print(json.dumps({c.metadata.name: api.ContainerState.Name(c.state)
                          for c in r.containers}))
    else:
        sys.exit("cri.py: unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
