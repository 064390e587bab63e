# Thread states over time, one panel per variant: how many threads run, wait
# BLOCKED and wait rolled back in BUFN, stacked in that order.
# Set by gpusim: n; file1..fileN (timeline CSVs whose columns 8, 9, 10 are
#   running, blocked, bufn) and title1..titleN; tdiv, tunit; tmax (the longest
#   makespan, in units); heading.
width = 1000
height = 100 + 220 * n
load plotsdir.'/common.gp'
file(i) = value(sprintf('file%d', i))
name(i) = value(sprintf('title%d', i))
set multiplot layout n, 1 title heading font ',14'
set key outside right top vertical
set xrange [0:(tmax > 0 ? tmax : 1)]
set yrange [0:*]
set lmargin 10
set ylabel 'threads'
set xlabel sprintf('simulated time (%s)', tunit)
set style fill solid 0.85 noborder
do for [i = 1:n] {
    set title name(i)
    # Whole threads: a tick per thread while they are few.
    stats file(i) skip 1 using ($8 + $9 + $10) nooutput
    step = STATS_max <= 8 ? 1 : ceil(STATS_max / 6.0)
    set ytics step
    # Drawn back to front: each area is the sum of its state and those below it.
    plot file(i) skip 1 using ($1 / tdiv):($8 + $9 + $10) with fillsteps lc rgb '#d55e00' title 'BUFN (rolled back)', \
         file(i) skip 1 using ($1 / tdiv):($8 + $9) with fillsteps lc rgb '#e69f00' title 'blocked', \
         file(i) skip 1 using ($1 / tdiv):8 with fillsteps lc rgb '#009e73' title 'running'
}
unset multiplot
