# The simulator's prediction against the real run: one point per scenario and
# variant, the makespan predicted across and the one measured up, on log
# scales, with the line where they would agree and the band of 10% around it.
# Set by gpusim: file (prediction.csv: a header, then scenario, variant,
#   predicted_makespan_ns, measured_makespan_ns, ...); tdiv, tunit; heading;
#   backend (the real device's name).
width = 900
height = 800
load plotsdir.'/common.gp'
set title heading font ',14'
set key top left
set logscale xy
set grid xtics ytics lc rgb '#dddddd' lt 1
set xlabel sprintf('predicted makespan (%s)', tunit)
set ylabel sprintf('measured makespan, %s (%s)', backend, tunit)
set size ratio -1
stats file using ($3 / tdiv) nooutput
lo_x = STATS_min; hi_x = STATS_max
stats file using ($4 / tdiv) nooutput
lo = (lo_x < STATS_min ? lo_x : STATS_min) / 2
hi = (hi_x > STATS_max ? hi_x : STATS_max) * 2
set xrange [lo:hi]
set yrange [lo:hi]
plot x with lines lw 1 lc rgb '#000000' title 'measured = predicted', \
     x * 1.1 with lines dt 2 lc rgb '#888888' title '10% either way', \
     x / 1.1 with lines dt 2 lc rgb '#888888' notitle, \
     file skip 1 using ($3 / tdiv):($4 / tdiv) with points pt 7 ps 1.3 lc rgb colour(1) notitle, \
     file skip 1 using ($3 / tdiv):($4 / tdiv):(stringcolumn(1) . ' ' . stringcolumn(2)) with labels offset char 1, char 0.5 left font ',8' notitle
