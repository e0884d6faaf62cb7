//go:build linux

package redisbench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/kbench/kbench/internal/redisserver"
)

// CmdStat is one command's line of INFO commandstats.
type CmdStat struct{ Calls, Failed, Rejected int64 }

// CommandStats reads INFO commandstats, keyed by lower-case command name.
// failed_calls and rejected_calls exist since Redis 6.2; older servers
// leave them zero.
func CommandStats(ctx context.Context, c *redis.Conn) (map[string]CmdStat, error) {
	s, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]CmdStat{}
	for k, v := range redisserver.ParseInfo(s) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		var st CmdStat
		for f := range strings.SplitSeq(v, ",") {
			key, val, _ := strings.Cut(f, "=")
			n, err := strconv.ParseInt(val, 10, 64)
			switch key {
			case "calls":
				if err != nil {
					return nil, fmt.Errorf("commandstats %s: %q", k, v)
				}
				st.Calls = n
			case "failed_calls":
				st.Failed = n
			case "rejected_calls":
				st.Rejected = n
			}
		}
		out[name] = st
	}
	return out, nil
}

// CheckCalls compares the calls between two INFO commandstats snapshots
// with want, per command, and requires no failed or rejected calls. A
// command the server counted that want does not name fails too (the
// server is the row's own), except info: the snapshots' own calls.
func CheckCalls(before, after map[string]CmdStat, want map[string]int64) error {
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if _, ok := want[name]; ok || name == "info" {
			continue
		}
		if d := after[name].Calls - before[name].Calls; d != 0 {
			bad = append(bad, fmt.Sprintf("%s: server counted %d calls, benchmark sent none", name, d))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		d := after[name].Calls - before[name].Calls
		if d != want[name] {
			bad = append(bad, fmt.Sprintf("%s: server counted %d calls, benchmark sent %d", name, d, want[name]))
		}
		if f := after[name].Failed - before[name].Failed; f != 0 {
			bad = append(bad, fmt.Sprintf("%s: %d failed calls", name, f))
		}
		if r := after[name].Rejected - before[name].Rejected; r != 0 {
			bad = append(bad, fmt.Sprintf("%s: %d rejected calls", name, r))
		}
	}
	if bad != nil {
		return fmt.Errorf("INFO commandstats disagrees with the requests sent: %s", strings.Join(bad, "; "))
	}
	return nil
}
