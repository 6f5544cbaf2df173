# e2e_throughput.gp - binds per second over time: the API server's raw
# capacity (a plain client posting Bindings) against kube-batchd's burst,
# from the same run of bench-e2e (BENCHMARKS.md section 2).
# Called by bench/run:
#   gnuplot -e "raw='DIR/e2e/repN/raw_per_sec.csv'; sched='DIR/e2e/repN/sched_per_sec.csv'; raw_after='DIR/e2e/repN/raw_after_per_sec.csv'; raw_rate=N; sched_rate=N; outfile='DIR/e2e_throughput.png'"
# raw_after (optional, '' for none): the raw phase run again after the burst.
# Each CSV has the columns "t_s binds": binds answered (raw) or seen bound on
# the watch (scheduler) in the 1 s window starting t_s seconds after the
# first bind request (raw) or the first bind (scheduler). The last window of
# each is partial. Window k is drawn over [k, k+1) (histeps centred at k+0.5).
# raw_rate, sched_rate: the averages bench-e2e reports (dashed); raw_rate is
# the mean of the raw phases before and after the burst when both ran.
set terminal pngcairo size 1100,600 noenhanced font ",10"
set output outfile
set title sprintf("binds per second, 1 s windows: raw capacity %.0f/s vs kube-batchd %.0f/s (averages)", raw_rate, sched_rate)
set key top right
set grid
set datafile commentschars "#"
set xlabel "seconds since the first bind request (raw) / the first bind (kube-batchd)"
set ylabel "binds in the window"
set yrange [0:*]
set xrange [0:*]
if (!exists("raw_after")) raw_after = ""
if (raw_after ne "") {
plot raw using ($1+0.5):2 with histeps lw 2 lc rgb "#1f77b4" title "raw Bindings (API server limit), before the burst", \
     raw_after using ($1+0.5):2 with histeps lw 2 lc rgb "#17becf" title "raw Bindings, after the burst", \
     sched using ($1+0.5):2 with histeps lw 2 lc rgb "#d62728" title "kube-batchd", \
     raw_rate with lines dt 2 lc rgb "#1f77b4" title "raw, mean of both", \
     sched_rate with lines dt 2 lc rgb "#d62728" notitle
} else {
plot raw using ($1+0.5):2 with histeps lw 2 lc rgb "#1f77b4" title "raw Bindings (API server limit)", \
     sched using ($1+0.5):2 with histeps lw 2 lc rgb "#d62728" title "kube-batchd", \
     raw_rate with lines dt 2 lc rgb "#1f77b4" notitle, \
     sched_rate with lines dt 2 lc rgb "#d62728" notitle
}
