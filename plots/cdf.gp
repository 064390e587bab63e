# One metric's empirical CDF, one step curve per variant: the fraction of the
# values at or below each x, so a curve further left (higher) is better.
# Set by gpusim: file (a block of x,p rows per curve, blocks apart by two
#   blank lines; p rises to 1); n (blocks); title1..titleN; xlabel; counts
#   (1: x is a count, with whole-number tics); heading.
width = 900
height = 560
load plotsdir.'/common.gp'
name(i) = value(sprintf('title%d', i))
set title heading font ',14'
set xlabel xlabel
set ylabel 'fraction at or below'
set yrange [0:1.02]
set ytics 0, 0.2, 1
set grid xtics ytics lc rgb '#dddddd' lt 1
# The data's own range (not widened to the next tic), with room on both sides
# so that a curve that rises at the smallest or largest x is not drawn on the
# border.
set autoscale xfix
set offsets graph 0.02, graph 0.03, 0, 0
if (counts) {
    stats file using 1 nooutput
    set xtics 0, (STATS_max <= 10 ? 1 : ceil(STATS_max / 8.0))
}
set key inside bottom right vertical samplen 2 font ',10' opaque
plot for [i = 1:n] file index (i - 1) using 1:2 with steps lw 2 lc rgb colour(i) title name(i)
