//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
)

// runSeries is -series: the change points of the kernels' files, in
// series order, each labelled by its file name without .txt. Exit as
// abreport.SeriesReport.Exit, 2 where a file cannot be read or a flag
// does not apply.
func runSeries(flags *flag.FlagSet, alpha, threshold float64, format, plotDir string, stdout, stderr io.Writer) int {
	render := seriesRenderers[format]
	switch r := refused(flags, func(f string) bool {
		return !slices.Contains([]string{"series", "alpha", "threshold", "format", "plot"}, f)
	}); {
	case r != "":
		fmt.Fprintf(stderr, "kbcompare: %s does not apply to -series, which takes -alpha, -threshold, -format and -plot\n", r)
		return 2
	case render == nil:
		fmt.Fprintf(stderr, "kbcompare: -format with -series accepts text or json, not %q\n", format)
		return 2
	case flags.NArg() < 2:
		fmt.Fprintln(stderr, "usage: kbcompare -series [-alpha 0.05] [-threshold 5%] [-format text|json] [-plot DIR] K1.txt K2.txt ...")
		return 2
	}
	var labels []string
	for _, p := range flags.Args() {
		labels = append(labels, strings.TrimSuffix(filepath.Base(p), ".txt"))
	}
	s, err := abseries.Read(flags.Args(), labels)
	if err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	o := abseries.DefaultOptions
	o.Alpha, o.Threshold = alpha, threshold
	rep := &abreport.SeriesReport{Series: s, Results: abseries.Detect(s.Medians(), o), Opts: o}
	if err := render(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if plotDir != "" {
		if err := abreport.WriteSeriesPlots(plotDir, rep); err != nil {
			fmt.Fprintf(stderr, "kbcompare: -plot: %v\n", err)
			return 2
		}
	}
	return rep.Exit()
}

var seriesRenderers = map[string]func(io.Writer, *abreport.SeriesReport) error{
	"text": abreport.WriteSeriesText,
	"json": abreport.WriteSeriesJSON,
}
