// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Sluice",
    products: [
        .library(name: "Sluice", targets: ["Sluice"]),
        .executable(name: "sluice", targets: ["SluiceCLI"]),
        .executable(name: "CallbackIngest", targets: ["CallbackIngest"]),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // libdeflate's CRC-32, linked statically (its module map links `libdeflate.a`).
        .systemLibrary(name: "CDeflate", path: "Sources/CDeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CSluiceShims", path: "Sources/CSluiceShims"),
        .target(name: "Sluice", dependencies: ["CZlib", "CDeflate", "CSluiceShims"]),
        .target(name: "SluiceBenchmarks", dependencies: ["Sluice"]),
        .executableTarget(name: "SluiceCLI", dependencies: ["Sluice", "SluiceBenchmarks"]),
        .executableTarget(name: "CallbackIngest", dependencies: ["Sluice", "SluiceBenchmarks"], path: "Examples/CallbackIngest"),
        // Helpers that more than one test target needs (scratch directories, the programs the
        // tests run); used by the test targets only, through Sluice's public API.
        .target(name: "SluiceTestSupport", dependencies: ["Sluice"], path: "Tests/SluiceTestSupport"),
        .testTarget(name: "SluiceTests", dependencies: ["Sluice", "CZlib", "CSluiceShims", "SluiceTestSupport"]),
        // A library user's program that the memory tests run as a process of its own.
        .executableTarget(name: "PipelineMemoryProbe", dependencies: ["Sluice"], path: "Tests/PipelineMemoryProbe"),
        .testTarget(name: "SluiceCLITests", dependencies: ["SluiceCLI", "Sluice", "SluiceBenchmarks", "SluiceTestSupport"]),
        .testTarget(name: "SluiceBenchmarksTests", dependencies: ["SluiceBenchmarks", "Sluice"]),
    ],
    swiftLanguageModes: [.v6]
)
