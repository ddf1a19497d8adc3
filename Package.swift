// swift-tools-version:6.0
// Lapse — hyperlapses, slideshows, clips and GIFs from the command line.
// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny")
]
let fast = swiftSettings // no unsafeFlags: they would make the package unusable as a dependency

/// A test target is declared only once its folder holds Swift files (a fresh clone has no empty folders; SwiftPM
/// caches this answer with the manifest: edit the manifest after adding a test folder.)
func hasSources(_ folder: String) -> Bool {
    let path = Context.packageDirectory + "/" + folder
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.contains { $0.hasSuffix(".swift") }
}

let package = Package(
    name: "Lapse",
    products: [
        .library(name: "LapseKit", targets: ["LapseKit"]),
        .executable(name: "lapse", targets: ["lapse"])
    ],
    targets: [
        // C bridges: module maps and shim headers only.
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [
                .apt([
                    "libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev",
                    "libswresample-dev", "libavfilter-dev"
                ])
            ]),
        .systemLibrary(name: "CImageQuant", pkgConfig: "imagequant", providers: [.apt(["libimagequant-dev"])]),
        .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),

        // Swift modules, one concern each; data flows route → panoramas → frames → encoder → file.
        .target(name: "LapseCore", swiftSettings: swiftSettings),
        .target(name: "LapseMedia", dependencies: ["CFFmpeg", "CExif", "LapseCore"], swiftSettings: fast),
        .target(
            name: "LapseGIF", dependencies: ["CImageQuant", "CGIF", "LapseMedia", "LapseCore"], swiftSettings: fast),
        .target(name: "LapseGeo", dependencies: ["LapseCore"], swiftSettings: swiftSettings),
        .target(name: "LapseNet", dependencies: ["LapseCore"], swiftSettings: swiftSettings),
        .target(
            name: "LapseRouting", dependencies: ["LapseGeo", "LapseNet", "LapseCore"], swiftSettings: swiftSettings),
        .target(
            name: "LapseRender", dependencies: ["CFreeType", "LapseMedia", "LapseGeo", "LapseCore"], swiftSettings: fast
        ),
        .target(name: "LapseMotion", dependencies: ["LapseMedia", "LapseGeo", "LapseCore"], swiftSettings: fast),
        .target(
            name: "LapsePanorama",
            dependencies: [
                "LapseGeo", "LapseNet", "LapseMedia", "LapseRender", "LapseTelemetry", "LapseCore"
            ], swiftSettings: fast),
        .target(name: "LapseReport", dependencies: ["LapseMedia", "LapseCore"], swiftSettings: swiftSettings),
        .target(
            name: "LapseTelemetry", dependencies: ["LapseMedia", "LapseGeo", "LapseCore"],
            swiftSettings: swiftSettings),
        .target(
            name: "LapseKit",
            dependencies: [
                "LapseCore", "LapseMedia", "LapseGIF", "LapseGeo", "LapseNet", "LapseRouting",
                "LapseRender", "LapseMotion", "LapsePanorama", "LapseReport", "LapseTelemetry"
            ],
            swiftSettings: swiftSettings),
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        // The command line: each command's options declared once (parsing and help), run in-process by tests;
        // the executable is its thin `main`.
        .target(name: "LapseCLI", dependencies: ["LapseKit"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "lapse", dependencies: ["LapseCLI", "LapseKit", "CMalloc"], swiftSettings: swiftSettings),

        .target(
            name: "TestSupport", dependencies: ["LapseMedia", "LapseCore"], path: "Tests/TestSupport",
            swiftSettings: swiftSettings),
        .testTarget(name: "LapseCoreTests", dependencies: ["LapseCore", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LapseMediaTests", dependencies: ["LapseMedia", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LapseGIFTests", dependencies: ["LapseGIF", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LapseGeoTests", dependencies: ["LapseGeo", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LapseNetTests", dependencies: ["LapseNet", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LapseRoutingTests", dependencies: ["LapseRouting", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LapseRenderTests", dependencies: ["LapseRender", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LapseMotionTests", dependencies: ["LapseMotion", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LapsePanoramaTests", dependencies: ["LapsePanorama", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LapseReportTests", dependencies: ["LapseReport", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LapseKitTests", dependencies: ["LapseKit", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LapseTelemetryTests", dependencies: ["LapseTelemetry", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "LapseCLITests", dependencies: ["LapseCLI", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CLITests", dependencies: ["TestSupport", "LapseGeo", "LapseTelemetry"], swiftSettings: swiftSettings)
    ].filter { $0.type != .test || hasSources("Tests/\($0.name)") }
)
