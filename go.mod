module github.com/opsearch/opsearch

go 1.26
