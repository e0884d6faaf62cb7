//go:build linux

// Package abreport writes an A/B comparison (AB: package abstat's
// Report, its perf-profile rows and kbab's notes of its run) in every
// form (Forms): the full text report (every row, 100 columns, for an
// e-mail), the brief form (what changed, 80 columns and one screen, for
// a review thread), markdown (for a forge), JSON and CSV (for scripts:
// json.go, csv.go), the pictures of kbcompare -plot (plot.go), and in
// each of them the perf-profile section of package profdelta's deltas
// (profile.go); also the plan (plan.go), a planned run's design
// (design.go), kbab's notes in the text form (run.go), and a series of
// kernels' change points (package abseries) as text, JSON, CSV and
// pictures (series.go, seriesjson.go, seriesplot.go). kbcompare and kbab
// print them and exit by one rule per kind of report (exit.go); abstat
// and abplan hold no text.
package abreport
