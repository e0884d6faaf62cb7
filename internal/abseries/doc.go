//go:build linux

// Package abseries holds the statistics of a series of kernels, numbers
// only: the change points of each row over the kernels (Detect) and a
// bisection over the images between a good and a bad kernel (Search).
// docs/comparing.md, "The change points" and "Bisection over images",
// states the rules, their reasons and what the simulations show.
package abseries
