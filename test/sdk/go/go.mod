module plant-store/sdk-consumer

go 1.23

require plant-store/sdk/go v0.0.0

// The client npm run sdk generates: a module of this repository, not one to download.
replace plant-store/sdk/go => ../../../sdk/go
