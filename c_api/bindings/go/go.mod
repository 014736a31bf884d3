module plexus/bindings/go

go 1.19
