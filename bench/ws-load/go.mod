module cog/bench/ws-load

go 1.22
