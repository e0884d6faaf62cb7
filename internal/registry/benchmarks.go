//go:build linux

package registry

// Benchmarks is every package of benchmarks, by path.
var Benchmarks = []Benchmark{
	{
		// The kernel profiles' drainer, a Go-side cost per sample: no
		// region, so no kernel counters, and no report.
		Package: "internal/kprofile",
		Rows:    []Row{{Name: "Collect/{known,new}"}},
	},
	{
		Package: "netbench",
		Units: map[string]Better{
			"tps":      Higher, // transactions per second, all flows (lkp Throughput_total_tps)
			"tps/flow": Higher, // transactions per second per flow (lkp Throughput_tps)
			"p50-us":   Lower,  // median transaction latency, microseconds
			"p99-us":   Lower,  // 99th percentile transaction latency, microseconds
			"slow/op":  Lower,  // share of transactions slower than 200 ms
		},
		Matrix: EveryKernel,
		Rows: []Row{
			{Name: "{TCPCRR,TCPRR}/ip=4/flows=1/req=1/rsp=1/mm=separate/cpu={any,same,cross}"},
			{Name: "{TCPCRR,TCPRR}/ip=4/flows=1/{req=1/rsp=1/mm=shared,req=64/rsp=1024/mm=separate}/cpu=any"},
			{Name: "{TCPCRR,TCPRR}/ip=4/flows=16/req=1/rsp=1/mm=separate/cpu={any,same,cross}", HostOnly: flows16},
			{Name: "{TCPCRR,TCPRR}/ip=4/flows=16/{req=1/rsp=1/mm=shared,req=64/rsp=1024/mm=separate}/cpu=any", HostOnly: flows16},
			{Name: "{TCPCRR,TCPRR}/ip=6/flows=1/{req=1/rsp=1,req=64/rsp=1024}/mm=separate/cpu=any", MaySkip: noIPv6},
			{Name: "{TCPCRR,TCPRR}/ip=6/flows=16/{req=1/rsp=1,req=64/rsp=1024}/mm=separate/cpu=any", MaySkip: noIPv6, HostOnly: flows16},
		},
		Reports: []Report{{
			ID:    "004",
			Found: `lkp netperf TCP_CRR, 16 clients on loopback: Throughput_total_tps 354692 -> 313620 (-11.6%) on Cascade Lake, -5.7% on Cooper Lake, -0.1% on Ice Lake, from a0918006f9 "fs: Add trusted_for(2) syscall implementation and related sysctl", a syscall nothing calls: kernel code and data addresses moved`,
			Read:  `[lore: search "a0918006f9 netperf"](https://lore.kernel.org/all/?q=a0918006f9+netperf) (the kernel-hardening thread on trusted_for v15)`,
			Row:   "TCPCRR/ip=4/flows=16/req=1/rsp=1/mm=separate/cpu=any",
			Unit:  "tps, tps/flow",
		}},
	},
	{
		Package: "prctlbench",
		Units: map[string]Better{
			"pulses/s":     Higher, // PR_SPEC_INDIRECT_BRANCH pulses per second
			"roundtrips/s": Higher, // pipe ping-pong round trips per second
			"loops/s":      Higher, // UnixBench syscall loops per second
		},
		Matrix: EveryKernel,
		Rows: []Row{
			{Name: "{Pulse,Sweep}/mode=sham"},
			{Name: "{Pulse,Sweep}/mode=protect", MaySkip: "the kernel offers no per-task speculation control (CI's), or KBENCH_PULSE is not protect"},
			{Name: "SyscallMix"},
			{Name: "PingPong/mm={separate,shared}/cpu={any,same,cross}"},
		},
	},
	{
		Package: "redisbench",
		Units: map[string]Better{
			"req/s":         Higher, // Redis requests per second (redis-benchmark's rps)
			"p50-us/batch":  Lower,  // median round trip of one pipeline of requests, microseconds
			"p99-us/batch":  Lower,  // 99th percentile round trip of one pipeline, microseconds
			"server-us/req": Lower,  // redis-server CPU time per request (schedstat, else utime+stime), microseconds
		},
		Matrix: FullKernel,
		Rows: []Row{
			{Name: "Recipe/cmd={SET,GET,ZADD,ZPOPMIN}/pipeline=256/client=wire"},
			{Name: "Recipe/cmd={GET,ZPOPMIN}/pipeline=256/client=go-redis", HostOnly: "the same requests from another client library; no kernel changes that"},
			{Name: "Recipe/cmd={GET,ZPOPMIN}/pipeline=1/client=go-redis", HostOnly: "100,096 unpipelined requests a round, about 90 s each under TCG"},
		},
		Reports: []Report{{
			ID:    "000, Redis",
			Found: "in the same thread: Redis 6.2.6 ZPOPMIN 999k -> 871k requests/s (-12.9%, GET flat) with MMTests' redis-benchmark-small recipe (`redis-benchmark --csv -c 1 -r 50000 -n 100000 -P 256`), i7-12700KF; on the parent kernel, one short-lived `PR_SPEC_INDIRECT_BRANCH` protect helper per CPU left ZPOPMIN 11.1% and 11.7% slower for the rest of the boot, sham helpers 1.3%",
			Read:  "the same thread (Chengfeng Lin's reply, with ibpb-pulse.c)",
			Row:   "Recipe/cmd=ZPOPMIN/pipeline=256/client=wire",
			Unit:  "req/s",
			Also:  "; `prctlbench` `Pulse`, `Sweep`; `KBENCH_PULSE` ([pulses.md](pulses.md))",
		}},
	},
	{
		Package: "seccompbench",
		Units: map[string]Better{
			"ops/s":            Higher, // the reference tool's bogo-ops per second
			"loads/s":          Higher, // successful seccomp filter loads per second
			"loops/s":          Higher, // UnixBench syscall loops per second
			"loader-ops/s":     Higher, // the loaders' ops per second beside a victim
			"victim-preempt/s": Lower,  // how often a pinned victim lost its CPU to another task, per second
		},
		Matrix: EveryKernel,
		Rows: []Row{
			{Name: "Load/shape={stress-ng,single}/loaders={1,gomaxprocs}"},
			{Name: "Syscall/work={mix,getpid}/kind={cached,full}/filters={0,1,4,32}"},
			{Name: "Bystander/loaders={idle,stress-ng}"},
		},
		Reports: []Report{{
			ID:    "000, seccomp",
			Found: "stress-ng seccomp ops/s 5866 -> 252.80 (-95.7%) after a3af84b0fa \"x86/bugs: Enable IBPB flush on BPF JIT allocation\" (Granite Rapids, 256 threads, `nr_threads: 100%`, 60 s)",
			Read:  "[lore: oe-lkp 202608191340.98574fe2-lkp@intel.com](https://lore.kernel.org/oe-lkp/202608191340.98574fe2-lkp@intel.com)",
			Row:   "Load/shape=stress-ng/loaders=gomaxprocs",
			Unit:  "ops/s",
		}, {
			ID:    "001",
			Found: "UnixBench `syscall 10 m` on 5.7-rc7 (aarch64): 19.8% / 33.0% / 78.3% fewer loops with 1 / 4 / 32 seccomp filters than with seccomp off",
			Read:  `[lore: netdev, "new seccomp mode aims to improve performance"](https://lore.kernel.org/netdev/20200531171915.wsxvdjeetmhpsdv2@ast-mbp.dhcp.thefacebook.com/T/#u)`,
			Row:   "Syscall/work=mix/kind=full/filters={1,4,32}",
			Unit:  "loops/s",
			Also:  " against `filters=0`",
		}},
	},
	{
		Package: "sockfdbench",
		Units: map[string]Better{
			"ops/s": Higher, // the reference tool's bogo-ops per second
			"fds/s": Higher, // fds passed in SCM_RIGHTS messages per second
		},
		Matrix: EveryKernel,
		Rows: []Row{
			{Name: "Sockfd/shape=stress-ng/kind=file/fds=1/run={serial,parallel}/mm=separate/cpu={any,same,cross}"},
			{Name: "Sockfd/shape=stress-ng/kind=file/fds=16/run={serial,parallel}/mm=separate/cpu=any"},
			{Name: "Sockfd/shape=stress-ng/kind=unix/fds={1,16}/run={serial,parallel}/mm=separate/cpu=any"},
			{Name: "Sockfd/shape=stress-ng/kind={file,unix}/fds=253/run={serial,parallel}/mm=separate/cpu=any", MaySkip: "RLIMIT_NOFILE leaves fewer than about 270 fds free"},
			{Name: "SockfdGC"},
		},
		Reports: []Report{{
			ID:    "003",
			Found: "stress-ng sockfd ops/s 927326 -> 983845 (+6.1%) from 284922f4c5 \"x86: uaccess: don't use runtime-const rewriting in modules\", which added one exported variable to the core kernel: the stressor is bottlenecked on the global `unix_gc_lock`, and Mateusz Guzik reads it as data pushed around, changing that lock's cacheline bouncing (he proposed `__cacheline_aligned_in_smp`; Sapphire Rapids, 224 threads)",
			Read:  "[lore: oe-lkp 202511281306.51105b46-lkp@intel.com](https://lore.kernel.org/oe-lkp/202511281306.51105b46-lkp@intel.com) and Mateusz Guzik's reply, [lore: CAGudoHFTikYFRoJu2mRhNFv6GHPP4LNEDetMdsqkzAg1nTJfRA@mail.gmail.com](https://lore.kernel.org/all/CAGudoHFTikYFRoJu2mRhNFv6GHPP4LNEDetMdsqkzAg1nTJfRA@mail.gmail.com/)",
			Row:   "Sockfd/shape=stress-ng/kind=file/fds=1/run=parallel/mm=separate/cpu=any",
			Unit:  "ops/s",
		}},
	},
}

const (
	flows16 = "16 client processes, 70 of netbench's 150 s under TCG (vm-matrix sets KBENCH_NET_FLOWS=1)"
	noIPv6  = "no IPv6 on loopback"
)
