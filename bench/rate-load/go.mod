module cog/bench/rate-load

go 1.22
