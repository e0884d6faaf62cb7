package netbench

import (
	"sync"

	"github.com/kbench/kbench/internal/thread"
)

// privateFiles says whether flow threads can have private fd tables, as
// netperf's and netserver's single-threaded processes do; probed once, on
// a throw-away thread. Where it cannot (a seccomp profile refuses
// unshare), flows share the process's table and the fingerprint says so.
var privateFiles = sync.OnceValue(func() error { return thread.Run(thread.UnshareFiles) })

// ownFiles gives the calling flow thread its own fd table where the
// machine allows it. The table dies with the thread, closing whatever the
// flow left open in it.
func ownFiles() error {
	if privateFiles() != nil {
		return nil
	}
	return thread.UnshareFiles()
}

// fdTables describes the flows' fd tables for the fingerprint.
func fdTables() string {
	if err := privateFiles(); err != nil {
		return "shared by the flow threads (" + err.Error() + ")"
	}
	return "private per flow thread"
}
