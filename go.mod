module github.com/misgrid/misgrid

go 1.26
