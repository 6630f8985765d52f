module example.com/temporalprobe

go 1.22

toolchain go1.22.5
