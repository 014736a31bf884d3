
;
xPlaceholder*
dtype0*
shape:ÿÿÿÿÿÿÿÿÿ
r
-zoo_prelu_1/p_re_lu_1/ReadVariableOp/resourceConst*
dtype0*-
value$B""%<‘§=`Yl;Í‘½€u¦;c"=
.
zoo_prelu_1/p_re_lu_1/ReluRelux*
T0

$zoo_prelu_1/p_re_lu_1/ReadVariableOpIdentity-zoo_prelu_1/p_re_lu_1/ReadVariableOp/resource*
T0*&
 _has_manual_control_dependencies(
O
zoo_prelu_1/p_re_lu_1/NegNeg$zoo_prelu_1/p_re_lu_1/ReadVariableOp*
T0
.
zoo_prelu_1/p_re_lu_1/Neg_1Negx*
T0
J
zoo_prelu_1/p_re_lu_1/Relu_1Reluzoo_prelu_1/p_re_lu_1/Neg_1*
T0
b
zoo_prelu_1/p_re_lu_1/mulMulzoo_prelu_1/p_re_lu_1/Negzoo_prelu_1/p_re_lu_1/Relu_1*
T0
b
zoo_prelu_1/p_re_lu_1/addAddV2zoo_prelu_1/p_re_lu_1/Reluzoo_prelu_1/p_re_lu_1/mul*
T0
[
NoOpNoOp%^zoo_prelu_1/p_re_lu_1/ReadVariableOp*&
 _has_manual_control_dependencies(
?
IdentityIdentityzoo_prelu_1/p_re_lu_1/add^NoOp*
T0"ª