module sdkpp

go 1.26.0

require golang.org/x/oauth2 v0.37.0
