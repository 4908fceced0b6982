#!/usr/bin/env python3
"""Drives Placement as a cloud's compute and scheduler services would: compute nodes register
as resource providers with inventories, traits and aggregates; instances are scheduled
(allocation candidates), claimed, resized, migrated and deleted; usages are read. Faults on
purpose: claims beyond capacity, stale generations, unknown providers, classes and traits,
bad bodies and microversions, missing and non-admin tokens, deleting providers in use.
Usage: placement_drive.py URL ROUNDS"""
import json
import random
import sys
import urllib.error
import urllib.request
import uuid

URL = sys.argv[1]
ROUNDS = int(sys.argv[2])
rng = random.Random(14)


def call(method, path, body=None, version="1.39", token="admin", raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(URL + path, data=data, method=method)
    if token:
        req.add_header("X-Auth-Token", token)
    if version:
        req.add_header("OpenStack-API-Version", "placement " + version)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read()
            return r.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        e.read()
        return e.code, None
    except OSError:
        return 0, None


def provider(name, vcpu, ram, disk):
    u = str(uuid.uuid4())
    if call("POST", "/resource_providers", {"name": name, "uuid": u})[0] == 409:
        u = call("GET", "/resource_providers?name=" + name)[1]["resource_providers"][0]["uuid"]
    gen = call("GET", "/resource_providers/" + u)[1]["generation"]
    call("PUT", "/resource_providers/%s/inventories" % u, {
        "resource_provider_generation": gen,
        "inventories": {
            "VCPU": {"total": vcpu, "allocation_ratio": 4.0},
            "MEMORY_MB": {"total": ram, "reserved": 512},
            "DISK_GB": {"total": disk, "max_unit": disk // 2}}})
    return u


def gen(u):
    s, b = call("GET", "/resource_providers/" + u)
    return b["generation"] if b else 0


def claim(consumer, rp, vcpu, ram, disk, project, user, cgen=None):
    return call("PUT", "/allocations/" + consumer, {
        "allocations": {rp: {"resources": {"VCPU": vcpu, "MEMORY_MB": ram, "DISK_GB": disk}}},
        "project_id": project, "user_id": user, "consumer_generation": cgen,
        "consumer_type": "INSTANCE"})[0]


def main():
    call("GET", "/", version=None)
    call("PUT", "/traits/CUSTOM_GPU_A100")
    call("PUT", "/traits/CUSTOM_SSD")
    call("PUT", "/resource_classes/CUSTOM_BAREMETAL_GOLD")
    nodes = [provider("compute-%02d.lab" % i, 16, 32768, 400) for i in range(1, 7)]
    agg = str(uuid.uuid4())
    for n in nodes[:3]:
        call("PUT", "/resource_providers/%s/aggregates" % n,
             {"aggregates": [agg], "resource_provider_generation": gen(n)})
    for n in nodes[::2]:
        call("PUT", "/resource_providers/%s/traits" % n,
             {"traits": ["CUSTOM_SSD", "HW_CPU_X86_AVX2"], "resource_provider_generation": gen(n)})
    projects = [str(uuid.uuid4()) for _ in range(4)]
    users = [str(uuid.uuid4()) for _ in range(3)]
    instances = {}
    for i in range(ROUNDS):
        flavor = rng.choice([(1, 1024, 10), (2, 4096, 40), (4, 8192, 80), (8, 16384, 160)])
        q = "resources=VCPU:%d,MEMORY_MB:%d,DISK_GB:%d" % flavor
        if i % 4 == 0:
            q += "&required=CUSTOM_SSD"
        if i % 6 == 0:
            q += "&member_of=" + agg
        s, cands = call("GET", "/allocation_candidates?" + q + "&limit=5")
        inst = str(uuid.uuid4())
        if cands and cands.get("allocation_requests"):
            rp = list(cands["allocation_requests"][0]["allocations"])[0]
            if claim(inst, rp, *flavor, rng.choice(projects), rng.choice(users)) == 204:
                instances[inst] = (rp, flavor)
        if i % 5 == 0 and instances:  # delete an instance
            victim = rng.choice(list(instances))
            call("DELETE", "/allocations/" + victim)
            instances.pop(victim)
        if i % 7 == 0 and instances:  # migrate: move the allocation to another node
            inst2 = rng.choice(list(instances))
            rp, fl = instances[inst2]
            dest = rng.choice(nodes)
            s, cur = call("GET", "/allocations/" + inst2)
            cg = cur.get("consumer_generation") if cur else None
            if claim(inst2, dest, *fl, rng.choice(projects), rng.choice(users), cg) == 204:
                instances[inst2] = (dest, fl)
        if i % 8 == 0:  # beyond capacity
            claim(str(uuid.uuid4()), rng.choice(nodes), 200, 4096, 10, projects[0], users[0])
        if i % 9 == 0:  # a stale consumer generation
            if instances:
                inst3 = rng.choice(list(instances))
                rp, fl = instances[inst3]
                claim(inst3, rp, *fl, projects[0], users[0], 99)
        if i % 10 == 0:  # a stale provider generation
            n = rng.choice(nodes)
            call("PUT", "/resource_providers/%s/inventories/VCPU" % n,
                 {"resource_provider_generation": 0, "total": 20})
        if i % 11 == 0:
            call("GET", "/resource_providers/" + str(uuid.uuid4()))
            call("GET", "/allocations/" + str(uuid.uuid4()))
        if i % 12 == 0:
            call("POST", "/resource_providers", raw=b"{not json")
        if i % 40 == 0:
            call("POST", "/resource_providers", {"nmae": "x"})
        if i % 13 == 0:
            call("GET", "/resource_providers", version="1.999")
            call("GET", "/resource_providers", version="latest-ish")
        if i % 14 == 0:
            call("GET", "/resource_providers", token=None)
            call("GET", "/usages?project_id=" + projects[1], token="user1:" + projects[1])
            call("DELETE", "/traits/CUSTOM_SSD", token="user1:" + projects[1])
        if i % 15 == 0:
            call("GET", "/allocation_candidates?resources=FOO_BAR:1")
            call("GET", "/allocation_candidates?resources=VCPU:1&required=CUSTOM_NOPE")
            call("PUT", "/traits/not_custom")
        if i % 16 == 0:
            call("DELETE", "/resource_providers/" + rng.choice(nodes))
            call("DELETE", "/resource_providers/%s/inventories" % rng.choice(nodes))
        if i % 17 == 0:
            call("GET", "/usages?project_id=" + rng.choice(projects))
            call("GET", "/resource_providers/%s/usages" % rng.choice(nodes))
        if i % 18 == 0:
            call("POST", "/resource_providers", {"name": "compute-01.lab"})
        if i % 19 == 0:
            call("PATCH", "/resource_providers")
            call("GET", "/nope")
        if i % 20 == 0:
            call("GET", "/resource_providers?in_tree=" + rng.choice(nodes))
            call("GET", "/resource_providers?required=CUSTOM_SSD&resources=VCPU:2")
            call("GET", "/traits?name=startswith:CUSTOM")
            call("GET", "/resource_classes")
        if i % 25 == 0:
            call("POST", "/reshaper", {"inventories": {}, "allocations": {}}, version="1.30")
        if i == ROUNDS // 2:
            extra = provider("compute-99.lab", 4, 4096, 50)
            call("DELETE", "/resource_providers/" + extra)
    for inst in list(instances)[: len(instances) // 2]:
        call("DELETE", "/allocations/" + inst)


main()
