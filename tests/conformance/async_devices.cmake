# plexus-plugin-check's checks of every device (sdk/conformance/checks_async.cc)
# on the two-device asynchronous test plugin (tests/broken_plugins/
# async_devices_plugin.c). Unbroken it passes; each flavour breaks device 1
# only, so the tool's checks of device 0 pass and the every-device check must
# fail, naming device 1 and the call. Included from
# tests/broken_plugins/CMakeLists.txt, where the plugins are built.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

function(px_add_async_devices_plugin name)
  plexus_add_plugin(${name} SOURCES ${PROJECT_SOURCE_DIR}/tests/broken_plugins/async_devices_plugin.c
                    OUTPUT_DIRECTORY ${PX_TEST_PLUGIN_DIR})
  target_compile_definitions(${name} PRIVATE ${ARGN})
  target_link_libraries(${name} PRIVATE Threads::Threads)
endfunction()

# NAME: the plugin's flavour; the rest: check_report.py's arguments.
function(px_add_async_devices_check flavour)
  add_test(NAME plugin_check_async_devices_${flavour}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/conformance/check_report.py
            $<TARGET_FILE:plexus-plugin-check> $<TARGET_FILE:px_test_plugin_async_devices_${flavour}>
            --only abi,memory,streams ${ARGN})
  set_tests_properties(plugin_check_async_devices_${flavour} PROPERTIES LABELS conformance
    ENVIRONMENT "PLEXUS_PLUGIN_PATH=;PLEXUS_REFERENCE_PLUGIN=$<TARGET_FILE:plexus_plugin_reference>")
endfunction()

px_add_async_devices_plugin(px_test_plugin_async_devices_good TEST_PLUGIN_NAME="async_devices")
px_add_async_devices_plugin(px_test_plugin_async_devices_device_open BROKEN_DEVICE_OPEN
                            TEST_PLUGIN_NAME="async_devices_device_open")
px_add_async_devices_plugin(px_test_plugin_async_devices_event_early BROKEN_EVENT_EARLY
                            TEST_PLUGIN_NAME="async_devices_event_early")
px_add_async_devices_plugin(px_test_plugin_async_devices_wait_ignored BROKEN_WAIT_IGNORED
                            TEST_PLUGIN_NAME="async_devices_wait_ignored")
px_add_async_devices_plugin(px_test_plugin_async_devices_copy_short BROKEN_COPY_SHORT
                            TEST_PLUGIN_NAME="async_devices_copy_short")
px_add_async_devices_plugin(px_test_plugin_async_devices_callback_twice BROKEN_CALLBACK_TWICE
                            TEST_PLUGIN_NAME="async_devices_callback_twice")
px_add_async_devices_plugin(px_test_plugin_async_devices_callback_early BROKEN_CALLBACK_EARLY
                            TEST_PLUGIN_NAME="async_devices_callback_early")

set(px_async_devices_skips memory.memory_stats memory.pinned_memory streams.errors_carried
    streams.stream_capture)
px_add_async_devices_check(good --skip ${px_async_devices_skips}
  --detail "streams.events_every_device=device(s) 0, 1"
           "streams.async_copies_every_device=device(s) 0, 1"
           "streams.callback_every_device=device(s) 0, 1"
           "memory.every_device_open=all 2 device(s) open")
px_add_async_devices_check(device_open --exit 1 --fail memory.every_device_open
  --detail "memory.every_device_open=device 1 does not open: device_open(1): UNAVAILABLE"
           "streams.events_every_device=not checked, as they do not open: 1")
px_add_async_devices_check(event_early --exit 1 --fail streams.events_every_device
  --detail "streams.events_every_device=device 1: event_synchronize returned before")
px_add_async_devices_check(wait_ignored --exit 1 --fail streams.events_every_device
  --detail "streams.events_every_device=device 1: stream B read stream A's buffer before")
px_add_async_devices_check(copy_short --exit 1 --fail streams.async_copies_every_device
  --detail "streams.async_copies_every_device=device 1: h2d, d2d and d2h asynchronous copies of 1 bytes")
px_add_async_devices_check(callback_twice --exit 1 --fail streams.callback_every_device
  --detail "streams.callback_every_device=device 1: the host callback ran 2 times")
px_add_async_devices_check(callback_early --exit 1 --fail streams.callback_every_device
  --detail "streams.callback_every_device=device 1: the host callback ran before the copies")
