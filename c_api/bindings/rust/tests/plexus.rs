//! The binding against the C API and the cpu plugin: a graph built op by
//! op, run as a session and eagerly; a TensorFlow graph; SavedModels;
//! errors. Needs PLEXUS_CPU_PLUGIN (the cpu plugin's file) and
//! PLEXUS_TEST_DATA (tests/data); CTest sets both.
use plexus::{Attr, Code, DType, EagerContext, Graph, OpSpec, Runtime, SavedModel, Session, Shape, Tensor};

fn runtime() -> Runtime {
    let plugin = std::env::var("PLEXUS_CPU_PLUGIN").expect("set PLEXUS_CPU_PLUGIN to the cpu plugin's file");
    let r = Runtime::new(false).unwrap();
    r.load_plugin(&plugin).unwrap();
    r
}

fn data(path: &str) -> String {
    let dir = std::env::var("PLEXUS_TEST_DATA").expect("set PLEXUS_TEST_DATA to tests/data");
    format!("{}/{}", dir, path)
}

fn placeholder<'g>(g: &'g Graph, name: &'g str, dims: &[i64]) -> plexus::Operation<'g> {
    g.add_operation(OpSpec {
        op_type: "Placeholder",
        name,
        attrs: vec![("dtype", Attr::Type(DType::FLOAT)), ("shape", Attr::Shape(Shape::known(dims)))],
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn build_run_and_eager() {
    let r = runtime();
    let g = Graph::new().unwrap();
    let wv = [1.0f32, -1.0, 2.0, 0.5];
    let bv = [0.25f32, -0.5];
    let w = Tensor::new(&[2, 2], &wv).unwrap();
    let b = Tensor::new(&[2], &bv).unwrap();
    let x = placeholder(&g, "x", &[2, 2]);
    let w_op = g
        .add_operation(OpSpec {
            op_type: "Const",
            name: "w",
            attrs: vec![("value", Attr::Tensor(&w)), ("dtype", Attr::Type(DType::FLOAT))],
            ..Default::default()
        })
        .unwrap();
    let b_op = g
        .add_operation(OpSpec {
            op_type: "Const",
            name: "b",
            attrs: vec![("value", Attr::Tensor(&b)), ("dtype", Attr::Type(DType::FLOAT))],
            ..Default::default()
        })
        .unwrap();
    let mm = g
        .add_operation(OpSpec {
            op_type: "MatMul",
            name: "dense/MatMul",
            inputs: vec![x.output(0), w_op.output(0)],
            attrs: vec![("transpose_b", Attr::Bool(false))],
            ..Default::default()
        })
        .unwrap();
    let relu = g.add_operation(OpSpec { op_type: "Relu", inputs: vec![mm.output(0)], ..Default::default() }).unwrap();
    let y = g
        .add_operation(OpSpec {
            op_type: "AddV2",
            name: "y",
            inputs: vec![relu.output(0), b_op.output(0)],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(y.output_shape(0).unwrap(), Shape::known(&[2, 2]));
    assert_eq!(mm.attr_type("T").unwrap(), DType::FLOAT);
    assert_eq!(g.operation("dense/MatMul").unwrap().op_type(), "MatMul");
    assert_eq!(relu.name(), "Relu");
    assert_eq!(g.num_operations(), 6);
    assert_eq!(y.input(0).unwrap().op.name(), "Relu");

    let xv = [1.0f32, 2.0, -3.0, 1.0];
    let xt = Tensor::new(&[2, 2], &xv).unwrap();
    let mut want = [0f32; 4];
    for i in 0..2 {
        for j in 0..2 {
            let acc: f32 = (0..2).map(|k| xv[i * 2 + k] * wv[k * 2 + j]).sum();
            want[i * 2 + j] = acc.max(0.0) + bv[j];
        }
    }
    let sess = Session::new(&r, &g, "CPU:0").unwrap();
    let got = sess.run(&[("x", &xt)], &["y"], &[]).unwrap()[0].values::<f32>().unwrap();
    for i in 0..4 {
        assert!((got[i] - want[i]).abs() <= 1e-6, "session: y[{}] = {}, want {}", i, got[i], want[i]);
    }

    let ctx = EagerContext::new(&r, "CPU:0").unwrap();
    let m = ctx.execute("MatMul", &[&xt, &w], &[]).unwrap();
    let rl = ctx.execute("Relu", &[&m[0]], &[]).unwrap();
    let e = ctx.execute("AddV2", &[&rl[0], &b], &[]).unwrap();
    assert_eq!(e[0].values::<f32>().unwrap(), got, "eager and session differ");
    let rows = ctx.execute("Unpack", &[&xt], &[("num", Attr::Int(2))]).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].values::<f32>().unwrap(), vec![-3.0, 1.0]);

    // GraphDef bytes import again and give the same numbers.
    let bytes = g.to_graph_def().unwrap();
    let g2 = Graph::import(&bytes).unwrap();
    let sess2 = Session::new(&r, &g2, "").unwrap();
    assert_eq!(sess2.run(&[("x", &xt)], &["y:0"], &[]).unwrap()[0].values::<f32>().unwrap(), got);

    let (g3, names) = g.gradients(&["y"], &["x"]).unwrap();
    assert!(names[0].is_some());
    assert!(g3.num_operations() > g.num_operations());
}

#[test]
fn errors() {
    let r = runtime();
    let g = Graph::new().unwrap();
    let x = placeholder(&g, "x", &[3]);
    let n = g
        .add_operation(OpSpec {
            op_type: "Placeholder",
            name: "n",
            attrs: vec![("dtype", Attr::Type(DType::INT32))],
            ..Default::default()
        })
        .unwrap();
    let e = g
        .add_operation(OpSpec { op_type: "AddV2", inputs: vec![x.output(0), n.output(0)], ..Default::default() })
        .err()
        .unwrap();
    assert_eq!(e.code, Code::INVALID_ARGUMENT);
    assert!(e.message.contains("AddV2"), "{}", e);
    assert_eq!(g.add_operation(OpSpec { op_type: "NoSuchOp", ..Default::default() }).err().unwrap().code, Code::NOT_FOUND);
    let dup = g.add_operation(OpSpec { op_type: "NoOp", name: "x", ..Default::default() }).err().unwrap();
    assert_eq!(dup.code, Code::ALREADY_EXISTS);
    assert_eq!(g.num_operations(), 2);
    assert!(Graph::import(b"not a graph {").is_err());
    let bad = Session::new(&r, &g, "TPU:3").err().unwrap();
    assert!(bad.message.contains("TPU:3"), "{}", bad);
    let ctx = EagerContext::new(&r, "").unwrap();
    let a = Tensor::new(&[2], &[1.0f32, 2.0]).unwrap();
    let i = Tensor::new(&[2], &[1i32, 2]).unwrap();
    assert_eq!(ctx.execute("AddV2", &[&a, &i], &[]).err().unwrap().code, Code::INVALID_ARGUMENT);
    assert!(a.values::<i32>().is_err());
}

#[test]
fn tensorflow_graph() {
    let r = runtime();
    let g = Graph::import_file(&data("tf_graphs/regression_frozen/frozen.pb")).unwrap();
    let pred = g.operation("pred").expect("no operation 'pred'");
    g.add_operation(OpSpec {
        op_type: "AddV2",
        name: "twice",
        inputs: vec![pred.output(0), pred.output(0)],
        ..Default::default()
    })
    .unwrap();
    let sess = Session::new(&r, &g, "CPU:0").unwrap();
    let x = Tensor::new(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
    let out = sess.run(&[("X", &x)], &["pred", "twice"], &[]).unwrap();
    let want = [1.2634872f64, 1.4774489, 1.6914107]; // tests/data/tf_graphs/MANIFEST.md
    let (p, t) = (out[0].values::<f32>().unwrap(), out[1].values::<f32>().unwrap());
    for i in 0..3 {
        assert!((p[i] as f64 - want[i]).abs() <= 1e-6, "pred = {:?}", p);
        assert!((t[i] as f64 - 2.0 * want[i]).abs() <= 2e-6, "twice = {:?}", t);
    }
}

#[test]
fn saved_models() {
    let r = runtime();
    let m = SavedModel::load(&r, &data("tf_graphs/half_plus_two_tf2/00000123"), &[], "CPU:0").unwrap();
    let x = Tensor::new(&[1], &[3.0f32]).unwrap();
    let y = m.run("serving_default", &[("x", &x)], &["y"]).unwrap();
    assert_eq!(y[0].values::<f32>().unwrap(), vec![3.5]);

    let m1 = SavedModel::load(&r, &data("tf_graphs/half_plus_two_tf1/00000123"), &["serve"], "").unwrap();
    let sigs = m1.signatures().unwrap();
    assert_eq!(sigs.len(), 5);
    let serving = sigs.iter().find(|s| s.key == "serving_default").expect("no serving_default");
    assert_eq!(serving.inputs[0].key, "x");
    assert_eq!(serving.inputs[0].tensor_name, "x:0");
    assert_eq!(serving.inputs[0].dtype, DType::FLOAT);
    assert_eq!(serving.inputs[0].shape, Shape::known(&[-1, 1]));
    let x1 = Tensor::new(&[3, 1], &[1.0f32, 2.0, 5.0]).unwrap();
    let y1 = m1.run("serving_default", &[("x", &x1)], &["y"]).unwrap();
    assert_eq!(y1[0].values::<f32>().unwrap(), vec![2.5, 3.0, 4.5]);
    let e = m1.run("nope", &[], &[]).err().unwrap();
    assert!(e.message.contains("serving_default"), "{}", e);
}

#[test]
fn strings() {
    let t = Tensor::strings(&[2], &[&b"a\0b"[..], b""]).unwrap();
    assert_eq!(t.dtype(), DType::STRING);
    assert_eq!(t.string_values().unwrap(), vec![b"a\0b".to_vec(), Vec::new()]);
}

#[test]
fn options_callables_checkpoints() {
    use plexus::{read_checkpoint, write_checkpoint, RunReport, SessionOptions};
    let r = runtime();
    let g = Graph::new().unwrap();
    let x = placeholder(&g, "x", &[3]);
    let relu = g
        .add_operation(OpSpec { op_type: "Relu", name: "relu", inputs: vec![x.output(0)], device: "GPU:7", ..Default::default() })
        .unwrap();
    g.add_operation(OpSpec { op_type: "Neg", name: "y", inputs: vec![relu.output(0)], ..Default::default() }).unwrap();
    let xt = Tensor::new(&[3], &[-1.0f32, 2.0, -3.0]).unwrap();

    let bad = SessionOptions { disabled_passes: vec!["nope".into()], ..Default::default() };
    assert!(Session::with_options(&r, &g, &bad).err().unwrap().message.contains("nope"));
    let strict = Session::with_options(&r, &g, &SessionOptions { strict_placement: true, ..Default::default() }).unwrap();
    let e = strict.run(&[("x", &xt)], &["y"], &[]).err().unwrap();
    assert!(e.message.contains("GPU:7"), "{}", e);

    let sess = Session::with_options(&r, &g, &SessionOptions { disable_optimizer: true, ..Default::default() }).unwrap();
    let c = sess.callable(&["x"], &["y"], &[]).unwrap();
    drop(sess); // the callable keeps the session
    let mut report = RunReport::default();
    let out = c.run(&[&xt], std::time::Duration::from_secs(10), Some(&mut report)).unwrap();
    assert_eq!(out[0].values::<f32>().unwrap(), vec![0.0, -2.0, 0.0]);
    assert!(report.built_executor && report.num_nodes >= 2, "{:?}", report);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    let o = c.run(&[&xt], std::time::Duration::ZERO, None).unwrap();
                    assert_eq!(o[0].values::<f32>().unwrap()[1], -2.0);
                }
            });
        }
    });

    let dir = std::env::temp_dir().join(format!("plexus_rust_ckpt_{}", std::process::id()));
    let prefix = dir.join("ckpt");
    let prefix = prefix.to_str().unwrap();
    write_checkpoint(prefix, &[("x", &xt), ("y", &out[0])]).unwrap();
    assert_eq!(read_checkpoint(prefix, "y").unwrap().values::<f32>().unwrap(), vec![0.0, -2.0, 0.0]);
    assert_eq!(read_checkpoint(prefix, "z").err().unwrap().code, Code::NOT_FOUND);
    std::fs::remove_dir_all(&dir).ok();
}
