
?
xPlaceholder* 
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
8
!zoo_softmax_1/softmax_3_1/SoftmaxSoftmaxx*
T0
@
IdentityIdentity!zoo_softmax_1/softmax_3_1/Softmax*
T0"ª