#!/bin/bash
# Plot the ratios of a benchmark run (tools/bench.sh's bench.txt) to a PNG:
# every "X/Y = R [IQR lo-hi]" line of the idle+active and timers runs, and
# the latency tables' "vs epoll" columns, one bar each against 1.00 (as
# fast as epoll; higher is better), with the interquartile range as an
# error bar where the run measured one; kevent blue, io_uring orange,
# poll() grey. Needs gnuplot (Debian: gnuplot-nox).
#
#   tools/bench/plot.sh [BENCH_TXT [PNG]]   default build/bench.txt, .png
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

txt=${1:-$BUILD/bench.txt}
png=${2:-${txt%.txt}.png}
[ -r "$txt" ] || die "no benchmark results in $txt: run tools/bench.sh"
command -v gnuplot >/dev/null || die "gnuplot is missing (apt-get install gnuplot-nox)"

dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
# label <TAB> ratio <TAB> IQR low <TAB> IQR high <TAB> colour (1 kevent,
# 2 io_uring, 3 other). "none" (no wait at all) is the floor, not a rival.
awk -v OFS='\t' '
	function colour(name) {
		return name ~ /^kevent|^timerfd\+kevent/ ? 1 : name ~ /io_uring/ ? 2 : 3
	}
	/^[^ ]/ { lat = "" }
	/^idle\+active: / {
		match($0, /N=[0-9]+/); n = substr($0, RSTART, RLENGTH)
		match($0, /M=[0-9]+/); scen = n " " substr($0, RSTART, RLENGTH)
	}
	/^timers: / { match($0, /T=[0-9]+/); scen = substr($0, RSTART, RLENGTH) }
	/^latency, both on CPU 0/ { lat = "1 CPU" }
	/^latency, CPUs 0 and 1/ { lat = "2 CPUs" }
	/^  [^ ]+\/[^ ]+ = [0-9.]+x \[IQR [0-9.]+-[0-9.]+\]/ {
		split($1, be, "/")
		if (be[1] == "none")
			next
		r = $3; sub(/x$/, "", r)
		iqr = $5; sub(/\]$/, "", iqr); split(iqr, q, "-")
		print scen ": " be[1], r, q[1], q[2], colour(be[1])
		next
	}
	lat != "" && /^  [a-z]/ && $NF ~ /^[0-9.]+x$/ && $1 !~ /^epoll/ && $1 != "none" {
		p50 = $(NF - 1); p99 = $NF; sub(/x$/, "", p50); sub(/x$/, "", p99)
		print "latency " lat " p50: " $1, p50, p50, p50, colour($1)
		print "latency " lat " p99: " $1, p99, p99, p99, colour($1)
	}
' "$txt" >"$dat"
[ -s "$dat" ] || die "no ratios found in $txt"

rows=$(wc -l <"$dat")
title=$(sed -n 's/^kernel: *//p' "$txt" | head -n 1)
gnuplot <<GP
set terminal png size $((300 + rows * 22)),700 font ",9" noenhanced
set output "$png"
set datafile separator "\t"
set title "kevent, io_uring and poll() against epoll, same QEMU boot (TCG)\n$title\nepoll's time or latency / the back end's: above 1.00 is faster than epoll; bars: IQR of the repetitions"
set ylabel "speed relative to epoll"
set yrange [0:*]
set xrange [-1:$rows]
set xtics rotate by 60 right
set grid ytics
set style fill solid 0.6 border -1
set boxwidth 0.7
set key off
set arrow from -1,1 to $rows,1 nohead dashtype 2 linewidth 2 linecolor rgb "black"
set linetype 1 linecolor rgb "#1f77b4"
set linetype 2 linecolor rgb "#ff7f0e"
set linetype 3 linecolor rgb "#7f7f7f"
plot "$dat" using 0:2:(0.7):5:xtic(1) with boxes linecolor variable, \
     "" using 0:2:3:4 with yerrorbars pointtype -1 linecolor rgb "black"
GP
echo "plot in $png"
