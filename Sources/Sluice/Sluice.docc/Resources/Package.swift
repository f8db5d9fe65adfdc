// swift-tools-version: 6.2
// An ingest pipeline built on Sluice's public library alone: a package of its own, with a path
// dependency on the root, so that it can use nothing but the public surface.
import PackageDescription

let package = Package(
    name: "IngestPipeline",
    dependencies: [.package(name: "Sluice", path: "../..")],
    targets: [
        .executableTarget(name: "IngestPipeline", dependencies: [.product(name: "Sluice", package: "Sluice")])
    ],
    swiftLanguageModes: [.v6]
)
