# Shared by every gpusim plot: the terminal, the output and a plain look.
# Set by gpusim: term (pngcairo, png or svg), out, and by the script: width, height.
if (term eq 'svg') {
    set terminal svg size width,height dynamic noenhanced font 'Sans,12' background rgb 'white'
} else {
    if (term eq 'pngcairo') {
        set terminal pngcairo size width,height noenhanced font 'Sans,10'
    } else {
        set terminal png size width,height noenhanced
    }
}
set output out
set datafile separator ','
set grid ytics lc rgb '#dddddd' lt 1
set border 3
set tics nomirror
set key noautotitle
# Colours that stay apart for the colour-blind (Okabe and Ito), one per variant.
array palette[8] = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#f0e442', '#000000']
colour(i) = palette[(i - 1) % 8 + 1]
# lc variable (a bar per variant) takes the same colours as lines do.
do for [i = 1:8] { set linetype i lc rgb palette[i] }
