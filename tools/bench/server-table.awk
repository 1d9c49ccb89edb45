# The table of a server benchmark, tools/libevent.sh --memcached-bench and
# tools/nginx.sh --bench, from the guest's lines
#
#   memcached-bench: rep R backend B method M: conns N requests N ...
#   nginx-bench: rep R backend B method M: conns N requests N ...
#
# (tools/libevent/init.sh with memcached-load.c; tools/nginx/init.sh with
# wrk and server-stat.c). Per point ("conns": a number of connections, or
# a name such as 10close) and backend, over the repetitions: the median
# and the range of requests/s, of the server's instructions per request (its CPU time
# over 2^shift ns, QEMU's -icount shift), system calls per request (all
# the server made, then those of the event loop: waits, ctl, submit,
# kevent_wait), libevent dispatches per request, and the medians of p50 and
# p99 latency; the ratios are to epoll's medians (> 1: better than epoll).
# Without dispatches counted (nginx), disp/r is "-".
#
#   awk -v shift=3 -v order="kevent kevent-plain epoll" -f server-table.awk

# The median of a[k, 1..n], and its range in lo, hi (globals).
function median(a, k, n,    i, j, t, v) {
	for (i = 1; i <= n; i++) {
		t = a[k, i]
		for (j = i - 1; j >= 1 && v[j] > t; j--)
			v[j + 1] = v[j]
		v[j + 1] = t
	}
	lo = v[1]
	hi = v[n]
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}

{
	backend = $5
	for (i = 1; i <= NF && $i != "conns"; i++)
		;
	delete kv
	for (; i < NF; i += 2)
		kv[$i] = $(i + 1)
	c = kv["conns"]
	req = kv["requests"]
	if (req <= 0)
		next
	k = c SUBSEP backend
	m = ++n[k]
	rps[k, m] = req / kv["seconds"]
	ipr[k, m] = kv["server_ns"] / 2 ^ shift / req
	t = kv["user_ticks"] + kv["sys_ticks"]
	upr[k, m] = t ? ipr[k, m] * kv["user_ticks"] / t : 0
	sys[k, m] = kv["syscalls"] / req
	loop[k, m] = (kv["waits"] + kv["ctl"] + kv["submit"] + kv["kwait"]) / req
	disp[k, m] = kv["dispatches"] / req
	p50[k, m] = kv["p50_us"]
	p99[k, m] = kv["p99_us"]
	if (!(c in seen)) {
		seen[c] = 1
		conns[++nc] = c
	}
}

END {
	nb = split(order, bs, " ")
	printf "%7s %-16s %18s %6s %18s %6s %6s %6s %7s %6s %6s %7s %7s\n", "conns",
		"backend", "requests/s", "x", "instr/request", "x", "user",
		"kernel", "calls/r", "loop/r", "disp/r", "p50 us", "p99 us"
	for (ci = 1; ci <= nc; ci++) {
		c = conns[ci]
		ke = c SUBSEP "epoll"
		if (n[ke]) {
			erps = median(rps, ke, n[ke])
			eipr = median(ipr, ke, n[ke])
		}
		for (bi = 1; bi <= nb; bi++) {
			k = c SUBSEP bs[bi]
			if (!n[k])
				continue
			r = median(rps, k, n[k])
			rr = sprintf("%.0f [%.0f-%.0f]", r, lo, hi)
			ip = median(ipr, k, n[k])
			ii = sprintf("%.0f [%.0f-%.0f]", ip, lo, hi)
			u = median(upr, k, n[k])
			d = median(disp, k, n[k])
			printf "%7s %-16s %18s %6s %18s %6s %6.0f %6.0f %7.2f %6.3f %6s %7.0f %7.0f\n",
				c, bs[bi] " (" n[k] ")", rr,
				n[ke] ? sprintf("%.3f", r / erps) : "-", ii,
				n[ke] ? sprintf("%.3f", eipr / ip) : "-",
				u, ip - u, median(sys, k, n[k]), median(loop, k, n[k]),
				d ? sprintf("%.3f", d) : "-", median(p50, k, n[k]),
				median(p99, k, n[k])
		}
	}
	print ""
	print "requests/s and instr/request: median [min-max] over the repetitions (in brackets"
	print "after the backend); x: the ratio to epoll's medians (instructions: epoll's over"
	print "the backend's, so > 1 is fewer); user, kernel: instr/request split by the kernel's"
	print "sampled utime and stime (medians); calls/r: system calls of the server per request;"
	print "loop/r: those of its event loop (waits, ctl, submit, kevent_wait); disp/r: libevent"
	print "dispatches per request; p50, p99: latency medians. instr = server CPU ns / 2^" shift "."
}
